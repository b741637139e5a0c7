package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// IdempotencyTTL is how long an Idempotency-Key is remembered; an older row
// is ignored, taken over by a new claim and deleted by retention.
const IdempotencyTTL = 24 * time.Hour

// idempotencyClaimLease is how long a claim committed in progress holds its
// key; an older one's process died. Only requests that call Temporal commit
// such a claim (the others claim inside their own transaction, ClaimInTx):
// the API bounds them to 10 s and their response's storing to 4 s
// (api.leasedRunTimeout, api.leasedStoreTimeout), so 15 s is above the
// longest a live one holds its key.
const idempotencyClaimLease = 15 * time.Second

// ErrIdempotencyKeyBusy is ClaimInTx's answer when another transaction held
// the key for longer than the wait.
var ErrIdempotencyKeyBusy = errors.New("store: the Idempotency-Key is held by a request still running")

// ErrIdempotencyClaimLost is Complete's and Release's answer when the claim
// is no longer the caller's: its lease lapsed and a retry took the key over
// (or it was completed already). The caller's work may then run twice.
var ErrIdempotencyClaimLost = errors.New("store: the Idempotency-Key's claim lapsed and another request holds the key")

// IdempotencyRequest identifies a request sent with an Idempotency-Key, scoped
// to its API key; method, path and body hash tell a retry from a reuse.
type IdempotencyRequest struct {
	APIKeyID uuid.UUID
	Key      string
	Method   string
	Path     string
	BodyHash []byte
	// RawBodyHash is not stored: the hash of the body's bytes, which rows
	// stored before bodies were compared as canonical JSON hold (they
	// lapse 24 hours after the upgrade).
	RawBodyHash []byte
}

// IdempotentResponse is a stored response to replay.
type IdempotentResponse struct {
	Status  int
	Headers map[string]string
	// Body is the body as sent, or sealed when Sealed; nil when Withheld.
	Body   []byte
	Sealed bool
	// Withheld says the response held a secret that could not be sealed.
	Withheld bool
}

// IdempotencyRecord is what a key was first used for, and its response.
type IdempotencyRecord struct {
	Method    string
	Path      string
	BodyHash  []byte
	CreatedAt time.Time
	Response  *IdempotentResponse
}

type idempotencyRow struct {
	bun.BaseModel `bun:"table:idempotency_keys"`
	APIKeyID      uuid.UUID         `bun:"api_key_id,pk"`
	Key           string            `bun:"idempotency_key,pk"`
	Method        string            `bun:"request_method"`
	Path          string            `bun:"request_path"`
	BodyHash      []byte            `bun:"request_hash"`
	CreatedAt     time.Time         `bun:"created_at"`
	Status        *int              `bun:"response_status"`
	Headers       map[string]string `bun:"response_headers,type:jsonb"`
	Body          []byte            `bun:"response_body"`
	Sealed        bool              `bun:"response_sealed"`
	Withheld      bool              `bun:"response_withheld"`
}

func (r idempotencyRow) record() IdempotencyRecord {
	rec := IdempotencyRecord{Method: r.Method, Path: r.Path, BodyHash: r.BodyHash, CreatedAt: r.CreatedAt}
	if r.Status != nil {
		rec.Response = &IdempotentResponse{
			Status: *r.Status, Headers: r.Headers, Body: r.Body, Sealed: r.Sealed, Withheld: r.Withheld,
		}
	}
	return rec
}

// IdempotencyKeys claims Idempotency-Keys and stores their responses.
type IdempotencyKeys struct{ db bun.IDB }

// IdempotencyKeys returns the Idempotency-Key queries.
func (s *Store) IdempotencyKeys() IdempotencyKeys { return IdempotencyKeys{db: s.db} }

// Claim takes the request's key with an in-progress row unless a live row
// holds it (then rec is that row). One INSERT decides, so exactly one of
// concurrent requests claims; it takes over expired or abandoned rows.
// Rows are dated, and their TTL and lease measured, by the database's
// clock: the API hosts' clocks may disagree, and a host behind the others
// would otherwise take over a live claim or keep an abandoned one.
func (k IdempotencyKeys) Claim(ctx context.Context, req IdempotencyRequest) (claimed bool, rec IdempotencyRecord, err error) {
	ttl, lease := IdempotencyTTL.Seconds(), idempotencyClaimLease.Seconds()
	// A row released between the insert and the select lets the next try
	// claim it; a key still contended after three reads as in progress.
	for range 3 {
		var createdAt time.Time
		err = k.db.NewRaw(`INSERT INTO idempotency_keys AS k
				(api_key_id, idempotency_key, request_method, request_path, request_hash, created_at)
			VALUES (?, ?, ?, ?, ?, date_trunc('microseconds', clock_timestamp()))
			ON CONFLICT (api_key_id, idempotency_key) DO UPDATE SET
				request_method = EXCLUDED.request_method, request_path = EXCLUDED.request_path,
				request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at,
				response_status = NULL, response_headers = NULL, response_body = NULL,
				response_sealed = false, response_withheld = false
			WHERE k.created_at < EXCLUDED.created_at - make_interval(secs => ?)
				OR (k.response_status IS NULL AND k.created_at < EXCLUDED.created_at - make_interval(secs => ?))
			RETURNING created_at`,
			req.APIKeyID, req.Key, req.Method, req.Path, req.BodyHash, ttl, lease,
		).Scan(ctx, &createdAt)
		if err == nil {
			return true, IdempotencyRecord{Method: req.Method, Path: req.Path, BodyHash: req.BodyHash, CreatedAt: createdAt}, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, IdempotencyRecord{}, translate(err, nil)
		}
		var row idempotencyRow
		err = k.db.NewSelect().Model(&row).
			Where("api_key_id = ? AND idempotency_key = ? AND created_at >= clock_timestamp() - make_interval(secs => ?)",
				req.APIKeyID, req.Key, ttl).
			Scan(ctx)
		if err == nil {
			return false, row.record(), nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, IdempotencyRecord{}, translate(err, nil)
		}
	}
	return false, IdempotencyRecord{Method: req.Method, Path: req.Path, BodyHash: req.BodyHash}, nil
}

// ClaimInTx is Claim on a Store bound to a transaction (RunInTx): the claim
// commits or rolls back with the request's work and response, so no other
// request sees it in progress. One with the same key waits for that
// transaction to end, for at most wait, then sees its response, or claims
// the key if it rolled back; ErrIdempotencyKeyBusy if it waited in vain.
// The transaction's later statements wait for locks as usual.
func (k IdempotencyKeys) ClaimInTx(ctx context.Context, req IdempotencyRequest, wait time.Duration) (claimed bool, rec IdempotencyRecord, err error) {
	timeout := strconv.FormatInt(max(wait.Milliseconds(), 1), 10) + "ms"
	if _, err := k.db.NewRaw("SELECT set_config('lock_timeout', ?, true)", timeout).Exec(ctx); err != nil {
		return false, IdempotencyRecord{}, translate(err, nil)
	}
	claimed, rec, err = k.Claim(ctx, req)
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) && pgErr.Field('C') == pgLockNotAvailable {
		return false, IdempotencyRecord{}, ErrIdempotencyKeyBusy
	}
	if err != nil {
		return false, IdempotencyRecord{}, err
	}
	if _, err := k.db.NewRaw("SET LOCAL lock_timeout TO DEFAULT").Exec(ctx); err != nil {
		return false, IdempotencyRecord{}, translate(err, nil)
	}
	return claimed, rec, nil
}

// Complete stores the response of the claim made at claimedAt, if still
// held (ErrIdempotencyClaimLost if not).
func (k IdempotencyKeys) Complete(ctx context.Context, apiKeyID uuid.UUID, key string, claimedAt time.Time, resp IdempotentResponse) error {
	res, err := k.db.NewUpdate().Model((*idempotencyRow)(nil)).
		Set("response_status = ?", resp.Status).
		Set("response_headers = ?", resp.Headers).
		Set("response_body = ?", resp.Body).
		Set("response_sealed = ?", resp.Sealed).
		Set("response_withheld = ?", resp.Withheld).
		Where("api_key_id = ? AND idempotency_key = ? AND created_at = ? AND response_status IS NULL",
			apiKeyID, key, claimedAt).
		Exec(ctx)
	return claimHeld(res, err, ErrIdempotencyClaimLost)
}

// claimHeld is lost when a statement on the caller's claim (an
// Idempotency-Key's or a portal form token's) changed no row.
func claimHeld(res sql.Result, err, lost error) error {
	if err != nil {
		return translate(err, nil)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return lost
	}
	return nil
}

// Release deletes the in-progress claim made at claimedAt, if still held
// (ErrIdempotencyClaimLost if not).
func (k IdempotencyKeys) Release(ctx context.Context, apiKeyID uuid.UUID, key string, claimedAt time.Time) error {
	res, err := k.db.NewDelete().Model((*idempotencyRow)(nil)).
		Where("api_key_id = ? AND idempotency_key = ? AND created_at = ? AND response_status IS NULL",
			apiKeyID, key, claimedAt).
		Exec(ctx)
	return claimHeld(res, err, ErrIdempotencyClaimLost)
}

// DeleteOlderThan deletes up to limit rows created before cutoff, and
// never a row the database's clock, by which claims are dated and their TTL
// measured, still holds live: a worker whose clock runs ahead must not
// delete a key a retry inside its 24 hours still counts on.
func (k IdempotencyKeys) DeleteOlderThan(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := k.db.NewRaw(`DELETE FROM idempotency_keys WHERE ctid IN (
			SELECT ctid FROM idempotency_keys
			WHERE created_at < least(?::timestamptz, clock_timestamp() - make_interval(secs => ?))
			LIMIT ?)`, cutoff, IdempotencyTTL.Seconds(), limit).Exec(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

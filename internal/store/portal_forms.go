package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/models"
)

// portalFormLease is how long a claim still in progress holds its token;
// an older one's process died and a replay takes it over. The portal
// bounds a form's work to 10 s (portal.formWorkTimeout).
const portalFormLease = 15 * time.Second

// ErrFormClaimLost is Complete's and Release's answer when the claim is no
// longer the caller's: its lease lapsed and a replay took the token over
// (or it was settled already), as ErrIdempotencyClaimLost for the API's
// keys. The form's work may then have run twice.
var ErrFormClaimLost = errors.New("store: the portal form token's claim lapsed and another submission holds it")

// PortalForms claims the portal's one-time form tokens and keeps the
// signing secrets it shows once, both scoped to a portal session.
type PortalForms struct{ db bun.IDB }

// PortalForms returns the portal form queries.
func (s *Store) PortalForms() PortalForms { return PortalForms{db: s.db} }

// FormClaim is the answer to Claim: the token is the caller's to use
// (Claimed), or an earlier submission has it: done, with the address its
// answer redirected to (Location), or still running (neither).
type FormClaim struct {
	Claimed   bool
	ClaimedAt time.Time
	Location  string
}

// Claim takes a form token of the session with an in-progress row unless
// another submission holds it. One INSERT decides, so exactly one of
// concurrent submissions claims; it takes over a claim left in progress
// longer than the lease.
func (f PortalForms) Claim(ctx context.Context, sessionID uuid.UUID, tokenHash []byte, now time.Time) (FormClaim, error) {
	now = pgTime(now)
	var claimedAt time.Time
	err := f.db.NewRaw(`INSERT INTO portal_form_submissions AS f (session_id, token_hash, claimed_at)
		VALUES (?0, ?1, ?2)
		ON CONFLICT (session_id, token_hash) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
		WHERE f.location IS NULL AND f.claimed_at < ?3
		RETURNING claimed_at`, sessionID, tokenHash, now, now.Add(-portalFormLease)).Scan(ctx, &claimedAt)
	if err == nil {
		return FormClaim{Claimed: true, ClaimedAt: claimedAt}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return FormClaim{}, translate(err, nil)
	}
	var location sql.NullString
	err = f.db.NewRaw(`SELECT location FROM portal_form_submissions WHERE session_id = ? AND token_hash = ?`,
		sessionID, tokenHash).Scan(ctx, &location)
	switch {
	case errors.Is(err, sql.ErrNoRows): // released in between: the next try claims it
		return FormClaim{}, nil
	case err != nil:
		return FormClaim{}, translate(err, nil)
	case !location.Valid:
		return FormClaim{}, nil
	}
	return FormClaim{Location: location.String}, nil
}

// Complete records where the claim's submission redirected, if the claim
// made at claimedAt still holds the token (ErrFormClaimLost if not).
func (f PortalForms) Complete(ctx context.Context, sessionID uuid.UUID, tokenHash []byte, claimedAt time.Time, location string) error {
	res, err := f.db.NewRaw(`UPDATE portal_form_submissions SET location = ?
		WHERE session_id = ? AND token_hash = ? AND claimed_at = ? AND location IS NULL`,
		location, sessionID, tokenHash, claimedAt).Exec(ctx)
	return claimHeld(res, err, ErrFormClaimLost)
}

// Release gives the token back after a submission that did nothing (a
// form shown again with its errors, an error page), so it may be sent
// again; ErrFormClaimLost if the claim made at claimedAt no longer holds it.
func (f PortalForms) Release(ctx context.Context, sessionID uuid.UUID, tokenHash []byte, claimedAt time.Time) error {
	res, err := f.db.NewRaw(`DELETE FROM portal_form_submissions
		WHERE session_id = ? AND token_hash = ? AND claimed_at = ? AND location IS NULL`,
		sessionID, tokenHash, claimedAt).Exec(ctx)
	return claimHeld(res, err, ErrFormClaimLost)
}

// Stash keeps a sealed signing secret of the endpoint for the session's
// next read, until expiresAt; a newer one replaces it.
func (f PortalForms) Stash(ctx context.Context, sessionID, subscriptionID uuid.UUID, sealed []byte, expiresAt time.Time) error {
	_, err := f.db.NewRaw(`INSERT INTO portal_secret_stash (session_id, subscription_id, sealed_secret, expires_at)
		VALUES (?0, ?1, ?2, ?3)
		ON CONFLICT (session_id, subscription_id) DO UPDATE SET sealed_secret = EXCLUDED.sealed_secret, expires_at = EXCLUDED.expires_at`,
		sessionID, subscriptionID, sealed, pgTime(expiresAt)).Exec(ctx)
	return translate(err, nil)
}

// PeekStash returns the session's stashed secret of the endpoint, sealed,
// without taking it; models.ErrNotFound when there is none or it expired
// at now. The caller takes it with TakeStashed once it knows it is the
// one its page shows.
func (f PortalForms) PeekStash(ctx context.Context, sessionID, subscriptionID uuid.UUID, now time.Time) ([]byte, error) {
	var rows []struct {
		Sealed []byte `bun:"sealed_secret"`
	}
	err := f.db.NewRaw(`SELECT sealed_secret FROM portal_secret_stash
		WHERE session_id = ? AND subscription_id = ? AND expires_at > ?`, sessionID, subscriptionID, pgTime(now)).Scan(ctx, &rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(rows) == 0 {
		return nil, models.NotFound("stashed secret")
	}
	return rows[0].Sealed, nil
}

// TakeStashed deletes the stashed secret PeekStash returned, if it is still
// there: false when another read took it (or a newer one replaced it).
func (f PortalForms) TakeStashed(ctx context.Context, sessionID, subscriptionID uuid.UUID, sealed []byte) (bool, error) {
	res, err := f.db.NewRaw(`DELETE FROM portal_secret_stash WHERE session_id = ? AND subscription_id = ? AND sealed_secret = ?`,
		sessionID, subscriptionID, sealed).Exec(ctx)
	if err != nil {
		return false, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// TakeStash deletes the session's stashed secret of the endpoint and
// returns it, sealed; models.ErrNotFound when there is none (already read,
// or expired at now), so it is shown once.
func (f PortalForms) TakeStash(ctx context.Context, sessionID, subscriptionID uuid.UUID, now time.Time) ([]byte, error) {
	var rows []struct {
		Sealed    []byte    `bun:"sealed_secret"`
		ExpiresAt time.Time `bun:"expires_at"`
	}
	err := f.db.NewRaw(`DELETE FROM portal_secret_stash WHERE session_id = ? AND subscription_id = ?
		RETURNING sealed_secret, expires_at`, sessionID, subscriptionID).Scan(ctx, &rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(rows) == 0 || !rows[0].ExpiresAt.After(now) {
		return nil, models.NotFound("stashed secret")
	}
	return rows[0].Sealed, nil
}

package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// idemFixture is a workspace, one Idempotency-Key request of its admin key
// and the test's wait for a held key.
type idemFixture struct {
	*webhookFixture
	req store.IdempotencyRequest
}

const idemWait = 300 * time.Millisecond

func newIdemFixture(t *testing.T) *idemFixture {
	f := newWebhookFixture(t)
	return &idemFixture{webhookFixture: f, req: store.IdempotencyRequest{
		APIKeyID: f.ws.APIKeyID, Key: "k", Method: "POST", Path: "/v1/events", BodyHash: []byte{1},
	}}
}

// rows is how many rows table holds, read outside any test transaction.
func (f *idemFixture) rows(t *testing.T, table string) int {
	t.Helper()
	n, err := f.st.DB().NewSelect().TableExpr(table).Count(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// publish is a request's work in tx: claim, one event, the response.
func (f *idemFixture) publish(ctx context.Context, tx *store.Store) (claimed bool, rec store.IdempotencyRecord, err error) {
	claimed, rec, err = tx.IdempotencyKeys().ClaimInTx(ctx, f.req, idemWait)
	if err != nil || !claimed {
		return claimed, rec, err
	}
	ev, err := tx.Events().Create(ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		return false, rec, err
	}
	resp := store.IdempotentResponse{Status: 202, Headers: map[string]string{}, Body: []byte(ev.ID.String())}
	return true, rec, tx.IdempotencyKeys().Complete(ctx, f.req.APIKeyID, f.req.Key, rec.CreatedAt, resp)
}

// The claim, the work and the response are seen by no one until they
// commit, and then all at once.
func TestIdempotencyClaimInTxCommitsWithTheWork(t *testing.T) {
	f := newIdemFixture(t)
	err := f.st.RunInTx(f.ctx, func(ctx context.Context, tx *store.Store) error {
		if claimed, _, err := f.publish(ctx, tx); err != nil || !claimed {
			t.Fatalf("claimed %v, %v", claimed, err)
		}
		if k, e := f.rows(t, "idempotency_keys"), f.rows(t, "events"); k != 0 || e != 0 {
			t.Fatalf("before commit others see %d claims and %d events, want none", k, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, rec, err := f.st.IdempotencyKeys().Claim(f.ctx, f.req)
	if err != nil || claimed || rec.Response == nil || rec.Response.Status != 202 || f.rows(t, "events") != 1 {
		t.Fatalf("after commit: claimed %v, %+v, %v, %d events; want the stored response and one event", claimed, rec, err, f.rows(t, "events"))
	}
}

// A rolled-back request leaves no claim: the next one claims the key at
// once.
func TestIdempotencyClaimInTxRollbackLeavesNothing(t *testing.T) {
	f := newIdemFixture(t)
	undo := errors.New("undo")
	err := f.st.RunInTx(f.ctx, func(ctx context.Context, tx *store.Store) error {
		if claimed, _, err := f.publish(ctx, tx); err != nil || !claimed {
			t.Fatalf("claimed %v, %v", claimed, err)
		}
		return undo
	})
	if !errors.Is(err, undo) {
		t.Fatalf("RunInTx: %v, want fn's error as is", err)
	}
	if k, e := f.rows(t, "idempotency_keys"), f.rows(t, "events"); k != 0 || e != 0 {
		t.Fatalf("%d claims and %d events left, want none", k, e)
	}
	err = f.st.RunInTx(f.ctx, func(ctx context.Context, tx *store.Store) error {
		claimed, _, err := f.publish(ctx, tx)
		if err == nil && !claimed {
			t.Error("the retry did not claim the key")
		}
		return err
	})
	if err != nil || f.rows(t, "events") != 1 {
		t.Fatalf("retry: %v, %d events", err, f.rows(t, "events"))
	}
}

// A request whose key another transaction holds waits for it: it gets the
// response the holder committed, or claims the key the holder rolled back,
// or, when the holder outlasts the wait, ErrIdempotencyKeyBusy, never a hang.
func TestIdempotencyClaimInTxWaitsForTheHolder(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hold        time.Duration
		commit      bool
		wantClaimed bool
		wantErr     error
	}{
		{name: "holder commits", hold: 100 * time.Millisecond, commit: true},
		{name: "holder rolls back", hold: 100 * time.Millisecond, wantClaimed: true},
		{name: "holder outlasts the wait", hold: 3 * idemWait, commit: true, wantErr: store.ErrIdempotencyKeyBusy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newIdemFixture(t)
			holding := make(chan struct{})
			holder := make(chan error, 1)
			go func() {
				holder <- f.st.RunInTx(f.ctx, func(ctx context.Context, tx *store.Store) error {
					if _, _, err := f.publish(ctx, tx); err != nil {
						return err
					}
					close(holding)
					time.Sleep(tc.hold)
					if !tc.commit {
						return errors.New("rolled back")
					}
					return nil
				})
			}()
			<-holding
			start := time.Now()
			var claimed bool
			var rec store.IdempotencyRecord
			err := f.st.RunInTx(f.ctx, func(ctx context.Context, tx *store.Store) (err error) {
				claimed, rec, err = f.publish(ctx, tx)
				return err
			})
			waited := time.Since(start)
			if herr := <-holder; tc.commit && herr != nil {
				t.Fatalf("holder: %v", herr)
			}
			if !errors.Is(err, tc.wantErr) || claimed != tc.wantClaimed {
				t.Fatalf("claimed %v, %v; want %v, %v", claimed, err, tc.wantClaimed, tc.wantErr)
			}
			if tc.wantErr == nil && !claimed && (rec.Response == nil || rec.Response.Status != 202) {
				t.Fatalf("the holder's response is not seen: %+v", rec)
			}
			if waited > idemWait+time.Second {
				t.Fatalf("waited %v for a key, bound %v", waited, idemWait)
			}
			if n := f.rows(t, "events"); n != 1 {
				t.Fatalf("%d events, want 1", n)
			}
		})
	}
}

// The wait bounds the claim only: the request's own work then waits for its
// locks as long as it would without an Idempotency-Key.
func TestIdempotencyClaimInTxWaitBoundsTheClaimOnly(t *testing.T) {
	f := newIdemFixture(t)
	sub := f.create(t, f.ws, true, models.EventTestCreated)
	locked := make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		holder <- f.st.DB().RunInTx(f.ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "SELECT 1 FROM webhook_subscriptions WHERE id = ? FOR UPDATE", sub.ID); err != nil {
				return err
			}
			close(locked)
			time.Sleep(3 * idemWait)
			return nil
		})
	}()
	<-locked
	err := f.st.RunInTx(f.ctx, func(ctx context.Context, tx *store.Store) error {
		if claimed, _, err := tx.IdempotencyKeys().ClaimInTx(ctx, f.req, idemWait); err != nil || !claimed {
			t.Fatalf("claimed %v, %v", claimed, err)
		}
		_, err := tx.Webhooks().RotateSecret(ctx, f.ws.WorkspaceID, sub.ID, []byte{4}, nil, 0)
		return err
	})
	if herr := <-holder; err != nil || herr != nil {
		t.Fatalf("rotation behind a lock held %v: %v (holder %v)", 3*idemWait, err, herr)
	}
}

// A claim whose lease lapsed and that a retry took over is no longer its
// first holder's: storing or releasing through the old claim changes
// nothing and says so, so the API can tell that the work may have run twice.
func TestIdempotencyCompleteAndReleaseOfALostClaim(t *testing.T) {
	f := newIdemFixture(t)
	keys := f.st.IdempotencyKeys()
	claimed, first, err := keys.Claim(f.ctx, f.req)
	if err != nil || !claimed {
		t.Fatalf("first claim: %v (%v)", claimed, err)
	}
	f.age(t, time.Minute) // past the 15 s lease
	claimed, retry, err := keys.Claim(f.ctx, f.req)
	if err != nil || !claimed {
		t.Fatalf("the retry did not take over the lapsed claim: %v (%v)", claimed, err)
	}
	resp := store.IdempotentResponse{Status: 202, Headers: map[string]string{}, Body: []byte("first")}
	if err := keys.Complete(f.ctx, f.req.APIKeyID, f.req.Key, first.CreatedAt, resp); !errors.Is(err, store.ErrIdempotencyClaimLost) {
		t.Fatalf("Complete through the lost claim: %v, want ErrIdempotencyClaimLost", err)
	}
	if err := keys.Release(f.ctx, f.req.APIKeyID, f.req.Key, first.CreatedAt); !errors.Is(err, store.ErrIdempotencyClaimLost) {
		t.Fatalf("Release through the lost claim: %v, want ErrIdempotencyClaimLost", err)
	}
	if err := keys.Complete(f.ctx, f.req.APIKeyID, f.req.Key, retry.CreatedAt, resp); err != nil {
		t.Fatalf("Complete through the live claim: %v", err)
	}
}

// age moves the fixture's key's row back by d, as if claimed d earlier by
// the database's clock.
func (f *idemFixture) age(t *testing.T, d time.Duration) {
	t.Helper()
	if _, err := f.st.DB().NewRaw(`UPDATE idempotency_keys SET created_at = created_at - make_interval(secs => ?)
		WHERE api_key_id = ? AND idempotency_key = ?`, d.Seconds(), f.req.APIKeyID, f.req.Key).Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
}

// A claim is dated by the database's clock and its 15 s lease measured by
// it: a retry 10 s later finds it in progress, one 20 s later takes it
// over. (The claim took the API host's time, so a host whose clock ran
// ahead took over live claims; Claim no longer takes a time at all, and
// this pins what the database's clock decides.)
func TestIdempotencyLeaseRunsOnTheDatabasesClock(t *testing.T) {
	f := newIdemFixture(t)
	keys := f.st.IdempotencyKeys()
	dbNow := func() time.Time {
		var now time.Time
		if err := f.st.DB().NewRaw("SELECT clock_timestamp()").Scan(f.ctx, &now); err != nil {
			t.Fatal(err)
		}
		return now
	}
	before := dbNow()
	claimed, first, err := keys.Claim(f.ctx, f.req)
	if err != nil || !claimed {
		t.Fatalf("first claim: %v (%v)", claimed, err)
	}
	if after := dbNow(); first.CreatedAt.Before(before.Truncate(time.Microsecond)) || first.CreatedAt.After(after) {
		t.Errorf("claimed at %v, not by the database's clock (between %v and %v)", first.CreatedAt, before, after)
	}
	f.age(t, 10*time.Second)
	if claimed, rec, err := keys.Claim(f.ctx, f.req); err != nil || claimed || rec.Response != nil {
		t.Fatalf("a retry inside the lease: claimed %v, %+v (%v); want in progress", claimed, rec, err)
	}
	f.age(t, 10*time.Second)
	if claimed, _, err := keys.Claim(f.ctx, f.req); err != nil || !claimed {
		t.Fatalf("a retry past the lease: claimed %v (%v); want taken over", claimed, err)
	}
}

// Retention never deletes a key the database's clock still holds live,
// whatever cutoff a worker's clock computes (one running a day ahead
// here): a retry inside the 24 hours would run the work again.
func TestIdempotencyRetentionKeepsLiveKeys(t *testing.T) {
	f := newIdemFixture(t)
	keys := f.st.IdempotencyKeys()
	if claimed, _, err := keys.Claim(f.ctx, f.req); err != nil || !claimed {
		t.Fatalf("claim: %v (%v)", claimed, err)
	}
	if n, err := keys.DeleteOlderThan(f.ctx, time.Now().Add(24*time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("deleted %d live keys (%v)", n, err)
	}
	f.age(t, store.IdempotencyTTL+time.Minute)
	if n, err := keys.DeleteOlderThan(f.ctx, time.Now(), 100); err != nil || n != 1 {
		t.Fatalf("deleted %d expired keys, want 1 (%v)", n, err)
	}
}

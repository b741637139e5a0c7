package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/crashpoint"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// idempotencyWait bounds how long a request waits for another holding its
// key (the first's transaction, milliseconds of work) before answering 409
// idempotency_request_in_progress. It waits in tries of claimTry, with no
// connection held between them (claimPause), so duplicates retrying in a
// loop cannot take the whole pool from other requests.
const (
	idempotencyWait = 2 * time.Second
	claimTry        = 50 * time.Millisecond
	claimPause      = 100 * time.Millisecond
)

// whileKeyBusy runs try until it is not refused with
// store.ErrIdempotencyKeyBusy or idempotencyWait has passed.
func whileKeyBusy(ctx context.Context, try func() error) error {
	deadline := time.Now().Add(idempotencyWait)
	for {
		err := try()
		if !errors.Is(err, store.ErrIdempotencyKeyBusy) || time.Now().Add(claimPause).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(claimPause):
		}
	}
}

var (
	errKeyHeld   = errors.New("idempotency: the key is another request's")
	errNotStored = errors.New("idempotency: the response is one a retry may change")
	errRefused   = errors.New("idempotency: the request was refused")
)

// runInTx claims the key, runs the handler and stores its response in one
// transaction, and answers only once it has committed. A crash leaves
// either all of it, which a retry gets replayed, or none of it, and the
// retry runs anew at once. A request with the same key waits for the
// transaction (the claim's row lock), then gets its response replayed.
func (s *Server) runInTx(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, req store.IdempotencyRequest) {
	buf := newBufferedResponse()
	rt := &requestTx{}
	var held store.IdempotencyRecord
	err := whileKeyBusy(r.Context(), func() error {
		return s.store.RunInTx(r.Context(), func(ctx context.Context, tx *store.Store) error {
			claimed, rec, err := tx.IdempotencyKeys().ClaimInTx(ctx, req, claimTry)
			switch {
			case err != nil:
				return err
			case !claimed:
				held = rec
				return errKeyHeld
			}
			// The handler runs in a savepoint: a refusal (4xx) changes nothing
			// and is stored even when a failed statement of the handler's
			// aborted the savepoint.
			err = tx.RunInTx(ctx, func(ctx context.Context, work *store.Store) error {
				rt.store = work
				next(buf, r.WithContext(context.WithValue(ctx, requestTxKey, rt)))
				if buf.code() >= 400 {
					rt.committed = nil
					return errRefused
				}
				return nil
			})
			switch {
			case err != nil && !errors.Is(err, errRefused):
				return err
			case !storable(buf.code()):
				return errNotStored
			}
			if err := tx.IdempotencyKeys().Complete(ctx, req.APIKeyID, req.Key, rec.CreatedAt, s.storedResponse(r, req, buf)); err != nil {
				return err
			}
			crashpoint.Hit("idempotency-before-commit")
			return nil
		})
	})
	switch {
	case err == nil:
		crashpoint.Hit("idempotency-after-commit")
		for _, fn := range rt.committed {
			fn()
		}
		buf.sendTo(w)
	case errors.Is(err, errKeyHeld):
		s.answerExisting(w, r, req, held)
	case errors.Is(err, errNotStored):
		buf.sendTo(w) // the handler's own answer; its work and the claim are undone
	case errors.Is(err, store.ErrIdempotencyKeyBusy):
		s.writeInProgress(w, r)
	default:
		s.writeError(w, r, err) // nothing committed: a retry runs anew
	}
}

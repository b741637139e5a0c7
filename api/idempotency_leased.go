package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// A leased request's claim commits before its handler runs, and holds the
// key until the response is stored, for at most the store's claim lease
// (15 s, store.idempotencyClaimLease), which must stay above the sum of
// these two bounds.
const (
	// leasedRunTimeout bounds the handler: its reads and its Temporal call
	// (recoveryWorkflowTimeout, cut short by this deadline).
	leasedRunTimeout = 10 * time.Second
	// leasedStoreTimeout bounds storing the response afterwards.
	leasedStoreTimeout = 4 * time.Second
)

// runLeased runs the handler of a route that calls Temporal under a claim
// committed first, then stores the response before sending it, or releases
// the claim when a retry may succeed (5xx, 408, 429, a panic) so that the
// retry runs the work again. A crash in between leaves the key in progress
// (409 to retries) until the lease lapses, then a retry runs it again.
func (s *Server) runLeased(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, req store.IdempotencyRequest) {
	// The claim commits alone, waiting for a request holding the key in its
	// transaction no longer than the others do (idempotencyWait).
	var claimed bool
	var rec store.IdempotencyRecord
	err := whileKeyBusy(r.Context(), func() error {
		return s.store.RunInTx(r.Context(), func(ctx context.Context, tx *store.Store) (err error) {
			claimed, rec, err = tx.IdempotencyKeys().ClaimInTx(ctx, req, claimTry)
			return err
		})
	})
	switch {
	case errors.Is(err, store.ErrIdempotencyKeyBusy):
		s.writeInProgress(w, r)
		return
	case err != nil:
		s.writeError(w, r, err)
		return
	case !claimed:
		s.answerExisting(w, r, req, rec)
		return
	}
	buf := newBufferedResponse()
	finished := false
	defer func() {
		// A panic sent nothing (the response is buffered): a retry runs anew.
		if !finished {
			s.releaseClaim(r, req, rec.CreatedAt)
		}
	}()
	ctx, cancel := context.WithTimeout(r.Context(), leasedRunTimeout)
	defer cancel()
	next(buf, r.WithContext(ctx))
	finished = true
	if !storable(buf.code()) {
		s.releaseClaim(r, req, rec.CreatedAt)
		buf.sendTo(w)
		return
	}
	s.storeLeased(r, req, rec.CreatedAt, s.storedResponse(r, req, buf))
	buf.sendTo(w)
}

// storeLeased stores the response, retrying within leasedStoreTimeout. The
// work is done, so the claim is not released if that fails: it stays in
// progress (409 to retries) until its lease lapses.
func (s *Server) storeLeased(r *http.Request, req store.IdempotencyRequest, claimedAt time.Time, resp store.IdempotentResponse) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), leasedStoreTimeout)
	defer cancel()
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		err = s.store.IdempotencyKeys().Complete(ctx, req.APIKeyID, req.Key, claimedAt, resp)
		switch {
		case err == nil:
			return
		case errors.Is(err, store.ErrIdempotencyClaimLost):
			// Trying again cannot help: the key is another request's now.
			// Or an earlier try of this store committed before its answer was
			// lost: then nothing ran twice.
			s.log.WarnContext(r.Context(), "idempotency: the response was not stored: the claim lapsed and a retry may have taken the key (its work may have run twice), or an earlier try stored it",
				slog.String("requestId", requestIDFrom(r.Context())))
			return
		}
	}
	s.log.WarnContext(r.Context(), "idempotency: response not stored; the key stays claimed until its lease lapses",
		slog.String("requestId", requestIDFrom(r.Context())), slog.Any("error", err))
}

// releaseClaim deletes the claim; if that fails, the claim's lease frees
// the key.
func (s *Server) releaseClaim(r *http.Request, req store.IdempotencyRequest, claimedAt time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), leasedStoreTimeout)
	defer cancel()
	err := s.store.IdempotencyKeys().Release(ctx, req.APIKeyID, req.Key, claimedAt)
	if errors.Is(err, store.ErrIdempotencyClaimLost) {
		s.log.WarnContext(r.Context(), "idempotency: the claim lapsed while the request ran and a retry took the key",
			slog.String("requestId", requestIDFrom(r.Context())))
		return
	}
	if err != nil {
		s.log.WarnContext(r.Context(), "idempotency: claim not released; it frees itself when its lease ends",
			slog.String("requestId", requestIDFrom(r.Context())), slog.Any("error", err))
	}
}

package api

import (
	"net/http"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// requestTx is the transaction a request sent with an Idempotency-Key runs
// in (idempotency_tx.go): the claim of its key, its work and its response
// commit together.
type requestTx struct {
	store *store.Store
	// committed runs once the transaction has committed, never if it
	// rolled back.
	committed []func()
}

// storeFor is the store a handler of an idempotent route uses: the
// request's transaction when it has one, the pool otherwise.
func (s *Server) storeFor(r *http.Request) *store.Store {
	if tx, ok := r.Context().Value(requestTxKey).(*requestTx); ok {
		return tx.store
	}
	return s.store
}

// onCommit runs fn once the request's work is committed: at once outside
// a transaction, after its commit inside one. Outbox pokes and metrics go
// through it, so a relay never wakes to a change it cannot see yet and no
// rolled-back work is counted.
func onCommit(r *http.Request, fn func()) {
	if tx, ok := r.Context().Value(requestTxKey).(*requestTx); ok {
		tx.committed = append(tx.committed, fn)
		return
	}
	fn()
}

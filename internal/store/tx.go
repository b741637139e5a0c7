package store

import (
	"context"

	"github.com/uptrace/bun"
)

// RunInTx runs fn with a Store whose every query goes to one transaction,
// committed when fn returns nil and rolled back otherwise (or on a panic).
// Called on such a Store, it nests as a savepoint, as do the Store methods
// that open a transaction of their own. fn's error is returned as is.
func (s *Store) RunInTx(ctx context.Context, fn func(ctx context.Context, tx *Store) error) error {
	var fnErr error
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		fnErr = fn(ctx, &Store{pool: s.pool, db: tx})
		return fnErr
	})
	if fnErr == nil {
		return translate(err, nil) // beginning or committing failed
	}
	return err
}

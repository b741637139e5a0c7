package main

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// errHeadersStuck: a sensitive header's value no key of the ring opens.
var errHeadersStuck = errors.New("a sensitive header no key opens")

// resealHeaders re-encrypts a subscription's sensitive header values under
// the current key, only if the row still holds the headers read, and
// reports whether it rewrote them (1) or not (0).
func resealHeaders(ctx context.Context, tx bun.Tx, box *secret.Box, id uuid.UUID, raw []byte) (int, error) {
	out, changed, err := store.ResealHeaders(raw, func(name string, sealed []byte) ([]byte, bool, error) {
		out, changed, err := box.Reseal(sealed, secret.WebhookHeaderBinding(id, name))
		if err != nil {
			return nil, false, errHeadersStuck
		}
		return out, changed, nil
	})
	if err != nil || !changed {
		return 0, err
	}
	res, err := tx.NewUpdate().TableExpr("webhook_subscriptions").Set("headers = ?::jsonb", string(out)).
		Where("id = ? AND headers = ?::jsonb", id, string(raw)).Exec(ctx)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

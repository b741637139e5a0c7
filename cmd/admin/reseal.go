package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/internal/secret"
)

// resealReport is what reseal-webhook-secrets prints.
type resealReport struct {
	Checked  int `json:"checked"`  // subscriptions read
	Resealed int `json:"resealed"` // of those, re-encrypted under the current key
	// HeadersResealed counts subscriptions whose sensitive headers were.
	HeadersResealed int `json:"headersResealed"`
}

// resealWebhookSecrets re-encrypts under the current key (the first of
// WEBHOOK_SECRET_KEY) every signing secret (a v1a subscription's is its
// whsk_ private key) and sensitive header value an older key opens, batchSize
// subscriptions per transaction. It is idempotent and safe beside running
// replicas: their rings open both values, and a row is rewritten only if it
// still holds what was read. A secret no key opens is reported as an error
// at the end, since the old key must not be dropped while such rows exist.
func resealWebhookSecrets(ctx context.Context, db *bun.DB, box *secret.Box, batchSize int) (resealReport, error) {
	var (
		rep   resealReport
		stuck []uuid.UUID
		after uuid.UUID
	)
	for {
		var rows []struct {
			ID               uuid.UUID `bun:"id"`
			SecretCiphertext []byte    `bun:"secret_ciphertext"`
			// The secret a rotation replaced still signs during its grace
			// period, so it is resealed too.
			PreviousCiphertext []byte `bun:"previous_secret_ciphertext"`
			Headers            []byte `bun:"headers"`
		}
		if err := db.NewSelect().TableExpr("webhook_subscriptions").ColumnExpr("id, secret_ciphertext, headers").
			// An expired previous secret signs nothing more: never stuck.
			ColumnExpr("CASE WHEN previous_secret_expires_at > now() THEN previous_secret_ciphertext END AS previous_secret_ciphertext").
			Where("id > ?", after).OrderExpr("id").Limit(batchSize).Scan(ctx, &rows); err != nil {
			return rep, err
		}
		if len(rows) == 0 {
			break
		}
		resealed, headers := 0, 0
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			resealed, headers = 0, 0
			for _, r := range rows {
				out, changed, err := box.Reseal(r.SecretCiphertext, r.ID[:])
				if err != nil {
					stuck = append(stuck, r.ID)
					continue
				}
				if !changed {
					continue
				}
				res, err := tx.NewUpdate().TableExpr("webhook_subscriptions").Set("secret_ciphertext = ?", out).
					Where("id = ? AND secret_ciphertext = ?", r.ID, r.SecretCiphertext).Exec(ctx)
				if err != nil {
					return err
				}
				n, _ := res.RowsAffected()
				resealed += int(n)
			}
			for _, r := range rows {
				if r.PreviousCiphertext == nil {
					continue
				}
				out, changed, err := box.Reseal(r.PreviousCiphertext, r.ID[:])
				if err != nil {
					if !slices.Contains(stuck, r.ID) {
						stuck = append(stuck, r.ID)
					}
					continue
				}
				if !changed {
					continue
				}
				// Only if a rotation has not replaced or the workflow
				// erased it meanwhile.
				if _, err := tx.NewUpdate().TableExpr("webhook_subscriptions").Set("previous_secret_ciphertext = ?", out).
					Where("id = ? AND previous_secret_ciphertext = ?", r.ID, r.PreviousCiphertext).Exec(ctx); err != nil {
					return err
				}
			}
			for _, r := range rows {
				n, err := resealHeaders(ctx, tx, box, r.ID, r.Headers)
				if err != nil && !errors.Is(err, errHeadersStuck) {
					return err
				}
				if err != nil && !slices.Contains(stuck, r.ID) {
					stuck = append(stuck, r.ID)
				}
				headers += n
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		rep.Checked += len(rows)
		rep.Resealed += resealed
		rep.HeadersResealed += headers
		after = rows[len(rows)-1].ID
	}
	if len(stuck) > 0 {
		return rep, fmt.Errorf("%d of %d subscriptions have a signing secret or sensitive header no key of WEBHOOK_SECRET_KEY opens (%s); the other %d were resealed as needed (%d changed). Keep every old key until those are resolved",
			len(stuck), rep.Checked, listIDs(stuck, 10), rep.Checked-len(stuck), rep.Resealed)
	}
	return rep, nil
}

// listIDs names up to max ids, then how many more there are.
func listIDs(ids []uuid.UUID, max int) string {
	parts := make([]string, 0, min(len(ids), max)+1)
	for _, id := range ids[:min(len(ids), max)] {
		parts = append(parts, id.String())
	}
	if len(ids) > max {
		parts = append(parts, fmt.Sprintf("and %d more", len(ids)-max))
	}
	return strings.Join(parts, ", ")
}

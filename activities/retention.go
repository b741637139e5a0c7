package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// retentionBatch bounds each DELETE, so no statement holds locks long and a
// heartbeat goes out between batches; batchTimeout keeps a batch well inside
// the two-minute heartbeat timeout, so a slow one fails and is retried.
const (
	retentionBatch = 5000
	batchTimeout   = time.Minute
)

// PurgeInput sets the retention cutoff: records created before it go.
type PurgeInput struct {
	Cutoff time.Time `json:"cutoff"`
}

// PurgeResult counts what was deleted.
type PurgeResult struct {
	Deliveries int `json:"deliveries"`
	Events     int `json:"events"`
	// IdempotencyKeys counts remembered Idempotency-Keys past their 24 hours.
	IdempotencyKeys int `json:"idempotencyKeys"`
	// PreviousSecrets counts expired signing secrets no secret workflow erased.
	PreviousSecrets int `json:"previousSecrets,omitempty"`
}

func batch(ctx context.Context, del func(context.Context, time.Time, int) (int, error), cutoff time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	return del(ctx, cutoff, retentionBatch)
}

// PurgeExpiredDeliveries deletes, in batches, delivery records and unreferenced
// events created before the cutoff, expired Idempotency-Keys, and expired
// previous signing secrets (a backstop for the WebhookSecret workflow).
func (a *Activities) PurgeExpiredDeliveries(ctx context.Context, in *PurgeInput) (*PurgeResult, error) {
	var res PurgeResult
	steps := []struct {
		kind   string
		del    func(context.Context, time.Time, int) (int, error)
		cutoff time.Time
		count  *int
	}{
		{"delivery", a.Store.Deliveries().DeleteOlderThan, in.Cutoff, &res.Deliveries},
		{"event", a.Store.Events().DeleteExpired, in.Cutoff, &res.Events},
		{"idempotency_key", a.Store.IdempotencyKeys().DeleteOlderThan, a.now().Add(-store.IdempotencyTTL), &res.IdempotencyKeys},
		{"previous_webhook_secret", a.Store.Webhooks().ClearExpiredPreviousSecrets, a.now(), &res.PreviousSecrets},
	}
	for _, step := range steps {
		for {
			n, err := batch(ctx, step.del, step.cutoff)
			if err != nil {
				return nil, err
			}
			*step.count += n
			a.Metrics.deleted(step.kind, n)
			activity.RecordHeartbeat(ctx, res)
			if n < retentionBatch {
				break
			}
		}
	}
	return &res, nil
}

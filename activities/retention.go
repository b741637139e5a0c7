package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// retentionBatch bounds each DELETE, so no statement holds locks for long
// and a heartbeat goes out between batches; batchTimeout keeps each batch
// well inside the workflow's two-minute heartbeat timeout, so a slow batch
// fails and is retried instead of being declared lost mid-statement.
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
	// PreviousSecrets counts rotated-away webhook signing secrets past their
	// grace period that no secret workflow had erased (it could not be
	// started: Temporal was away when the API rotated).
	PreviousSecrets int `json:"previousSecrets,omitempty"`
}

// batch runs one bounded delete.
func batch(ctx context.Context, del func(context.Context, time.Time, int) (int, error), cutoff time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	return del(ctx, cutoff, retentionBatch)
}

// PurgeExpiredDeliveries deletes delivery records created before the
// cutoff, then the events before the cutoff that no record refers to any
// more (an event's data is only needed to deliver it), and last the
// Idempotency-Keys older than store.IdempotencyTTL, whose cutoff is their
// own (lookups already ignore them; this keeps the table small), and the
// webhook signing secrets whose rotation's grace period has ended, a
// backstop for the secret workflow (deliveries stop signing with them at
// the expiry either way).
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

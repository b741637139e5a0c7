package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// retentionBatch bounds each DELETE, so no statement holds locks for long
// and a heartbeat goes out between batches.
const retentionBatch = 5000

// PurgeInput sets the retention cutoff: records created before it go.
type PurgeInput struct {
	Cutoff time.Time
}

// PurgeResult counts what was deleted.
type PurgeResult struct {
	Deliveries int
	Events     int
}

// PurgeExpiredDeliveries deletes delivery records created before the
// cutoff, then the events before the cutoff that no record refers to any
// more (an event's data is only needed to deliver it).
func (a *Activities) PurgeExpiredDeliveries(ctx context.Context, in *PurgeInput) (*PurgeResult, error) {
	var res PurgeResult
	for {
		n, err := a.Store.Deliveries().DeleteOlderThan(ctx, in.Cutoff, retentionBatch)
		if err != nil {
			return nil, err
		}
		res.Deliveries += n
		a.Metrics.deleted("delivery", n)
		activity.RecordHeartbeat(ctx, res)
		if n < retentionBatch {
			break
		}
	}
	for {
		n, err := a.Store.Events().DeleteExpired(ctx, in.Cutoff, retentionBatch)
		if err != nil {
			return nil, err
		}
		res.Events += n
		a.Metrics.deleted("event", n)
		activity.RecordHeartbeat(ctx, res)
		if n < retentionBatch {
			break
		}
	}
	return &res, nil
}

package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// FailedCount is how many events created in [since, until) have a failed
// delivery to the subscription, what a recovery of that window attempts
// again (FailedPage walks the same rows), counted up to limit so a
// confirmation page costs a bounded read.
func (d Deliveries) FailedCount(ctx context.Context, workspaceID, subscriptionID uuid.UUID, since, until time.Time, limit int) (int, error) {
	lo, hi := ceilMicro(&since), ceilMicro(&until)
	var n int
	err := d.db.NewRaw(`SELECT count(*) FROM (
			SELECT 1 FROM webhook_delivery_states AS st
			JOIN events AS e ON e.id = st.event_id AND e.workspace_id = ?
			WHERE st.subscription_id = ? AND st.status = 'failed'
				AND st.event_date_created >= ? AND st.event_date_created < ?
			LIMIT ?) AS failed`, workspaceID, subscriptionID, *lo, *hi, limit).Scan(ctx, &n)
	return n, translate(err, nil)
}

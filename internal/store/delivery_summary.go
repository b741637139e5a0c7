package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/openlayer-ai/workspace-service/models"
)

// Summaries returns, for each of the workspace's subscriptions in ids, its
// latest attempt and, since since, its events attempted (each once,
// succeeded when any of its attempts in the window did) and its attempts.
// Both walk the index (subscription_id, date_created DESC): one row per
// subscription for the latest, the window's rows for the counts.
func (d Deliveries) Summaries(ctx context.Context, workspaceID uuid.UUID, ids []uuid.UUID, since time.Time) (map[uuid.UUID]models.DeliverySummary, error) {
	out := make(map[uuid.UUID]models.DeliverySummary, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var last []deliveryRow
	err := d.db.NewRaw(`SELECT l.* FROM webhook_subscriptions AS s
		CROSS JOIN LATERAL (
			SELECT * FROM webhook_deliveries WHERE subscription_id = s.id
			ORDER BY date_created DESC, id DESC LIMIT 1) AS l
		WHERE s.workspace_id = ?0 AND s.id = ANY(?1)`, workspaceID, pgdialect.Array(ids)).Scan(ctx, &last)
	if err != nil {
		return nil, translate(err, nil)
	}
	for _, r := range last {
		m := r.model()
		out[r.SubscriptionID] = models.DeliverySummary{SubscriptionID: r.SubscriptionID, Last: &m}
	}
	var counts []struct {
		SubscriptionID uuid.UUID `bun:"subscription_id"`
		Events         int       `bun:"events"`
		Succeeded      int       `bun:"succeeded"`
		Attempts       int       `bun:"attempts"`
	}
	err = d.db.NewRaw(`SELECT subscription_id, count(*) AS events, count(*) FILTER (WHERE succeeded) AS succeeded,
			sum(attempts) AS attempts
		FROM (SELECT d.subscription_id, d.event_id, bool_or(d.success) AS succeeded, count(*) AS attempts
			FROM webhook_deliveries AS d JOIN webhook_subscriptions AS s ON s.id = d.subscription_id
			WHERE s.workspace_id = ?0 AND d.subscription_id = ANY(?1) AND d.date_created >= ?2
			GROUP BY d.subscription_id, d.event_id) AS e
		GROUP BY subscription_id`, workspaceID, pgdialect.Array(ids), pgTime(since)).Scan(ctx, &counts)
	if err != nil {
		return nil, translate(err, nil)
	}
	for _, c := range counts {
		s := out[c.SubscriptionID]
		s.SubscriptionID, s.Events, s.Succeeded, s.Attempts = c.SubscriptionID, c.Events, c.Succeeded, c.Attempts
		out[c.SubscriptionID] = s
	}
	return out, nil
}

package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// Messages returns one page of a workspace's events, newest first, each with
// its recipients' delivery status, narrowed by type, time, recipient and
// status: an event matches when one of its recipients (the filter's
// subscription, if any) has the status. The page walks
// events_workspace_created_idx and tests each event's recipients, so no
// index beyond it serves the recipient filters; retention bounds the walk.
func (e Events) Messages(ctx context.Context, f models.MessageFilter) (models.Page[models.EventDetail], error) {
	where := `e.workspace_id = ?0`
	if f.Type != "" {
		where += ` AND e.type = ?3`
	}
	// date_created holds microseconds: bounds round up to keep [since, until).
	if f.Since != nil {
		where += ` AND e.date_created >= ?4`
	}
	if f.Until != nil {
		where += ` AND e.date_created < ?5`
	}
	if f.SubscriptionID != nil || f.Status != "" {
		where += ` AND EXISTS (SELECT 1 FROM ` + recipientsOf + ` WHERE true`
		if f.SubscriptionID != nil {
			where += ` AND r.id = ?6`
		}
		if f.Status != "" {
			where += ` AND ` + recipientStatus + ` = ?7`
		}
		where += `)`
	}
	var sub uuid.UUID
	if f.SubscriptionID != nil {
		sub = *f.SubscriptionID
	}
	args := []any{f.WorkspaceID, f.Page.PerPage, f.Page.Offset(), string(f.Type), ceilMicro(f.Since), ceilMicro(f.Until), sub, string(f.Status)}
	var rows []eventListRow
	err := e.db.NewRaw(`SELECT e.id, e.type, e.date_created FROM events AS e WHERE `+where+`
		ORDER BY e.date_created DESC, e.id DESC LIMIT ?1 OFFSET ?2`, args...).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.EventDetail]{}, translate(err, nil)
	}
	page, err := pageWithTotal(ctx, f.Page, rows, eventListRow.detail, func(ctx context.Context) (int, error) {
		var n int
		err := e.db.NewRaw(`SELECT count(*) FROM events AS e WHERE `+where, args...).Scan(ctx, &n)
		return n, err
	})
	if err != nil || len(page.Items) == 0 {
		return page, err
	}
	ids := make([]uuid.UUID, len(page.Items))
	for i, ev := range page.Items {
		ids[i] = ev.ID
	}
	recipients, err := e.recipients(ctx, f.WorkspaceID, ids)
	if err != nil {
		return models.Page[models.EventDetail]{}, err
	}
	for i := range page.Items {
		page.Items[i].Recipients = recipients[page.Items[i].ID]
	}
	return page, nil
}

package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// MessagesCountCap bounds Messages: its total counts at most this many
// events, and its pages reach no further, so neither a count nor an
// offset walks all of a busy workspace's retained events.
const MessagesCountCap = 10_000

// Messages returns one page of a workspace's events, newest first, each with
// its recipients' delivery status, narrowed by type, time, recipient and
// status: an event matches when one of its recipients (the filter's
// subscription, if any) has the status. The page walks
// events_workspace_created_idx and tests each event's recipients, so no
// index beyond it serves the recipient filters. more says that more than
// MessagesCountCap events match: the page's total is then the cap, and
// pages past it are empty.
func (e Events) Messages(ctx context.Context, f models.EventFilter) (page models.Page[models.EventDetail], more bool, err error) {
	where, args := eventWhere(f)
	// A page ends at the cap: LIMIT keeps it from reaching past.
	limit := max(min(f.Page.PerPage, MessagesCountCap-f.Page.Offset()), 0)
	args[1] = limit
	args = append(args, MessagesCountCap+1)
	var rows []eventListRow
	if limit > 0 {
		err = e.db.NewRaw(`SELECT e.id, e.type, e.date_created FROM events AS e WHERE `+where+`
			ORDER BY e.date_created DESC, e.id DESC LIMIT ?1 OFFSET ?2`, args...).Scan(ctx, &rows)
		if err != nil {
			return models.Page[models.EventDetail]{}, false, translate(err, nil)
		}
	}
	count := func(ctx context.Context) (int, error) {
		var n int
		err := e.db.NewRaw(`SELECT count(*) FROM (SELECT 1 FROM events AS e WHERE `+where+` LIMIT ?8) AS c`, args...).Scan(ctx, &n)
		return n, err
	}
	page, err = pageWithTotal(ctx, f.Page, rows, eventListRow.detail, count)
	if err == nil && limit > 0 && limit < f.Page.PerPage && len(rows) == limit {
		// A page the cap cut short does not tell the total.
		n, cerr := count(ctx)
		page, err = models.NewPage(f.Page, n, page.Items), translate(cerr, nil)
	}
	if err != nil {
		return models.Page[models.EventDetail]{}, false, err
	}
	if page.Meta.TotalItems > MessagesCountCap {
		page = models.NewPage(f.Page, MessagesCountCap, page.Items)
		more = true
	}
	if len(page.Items) == 0 {
		return page, more, nil
	}
	ids := make([]uuid.UUID, len(page.Items))
	for i, ev := range page.Items {
		ids[i] = ev.ID
	}
	recipients, err := e.recipients(ctx, f.WorkspaceID, ids)
	if err != nil {
		return models.Page[models.EventDetail]{}, false, err
	}
	for i := range page.Items {
		page.Items[i].Recipients = recipients[page.Items[i].ID]
	}
	return page, more, nil
}

// eventWhere is the condition on events AS e that f selects, with its
// arguments: ?0 the workspace, ?1 and ?2 the page's limit and offset, then
// the filters'. An event matches a status when one of its recipients (the
// filter's subscription, if any) has it; the recipients are tested event
// by event, so only events_workspace_created_idx serves the walk.
func eventWhere(f models.EventFilter) (string, []any) {
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
	return where, []any{f.WorkspaceID, f.Page.PerPage, f.Page.Offset(), string(f.Type),
		ceilMicro(f.Since), ceilMicro(f.Until), sub, string(f.Status)}
}

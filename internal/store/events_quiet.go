package store

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// claimQuietSQL leases test events, then the events of quiet workspaces:
// those with at most ?4 events undispatched (leased ones included), all of
// each one's claimable events, the workspaces in rotation after the cursor
// as in claimSQL's walk. A workspace with a backlog is passed over at the
// cost of two index probes (the walk's step and its count, which stops
// at ?4 + 1 rows). The walk stops at the limit's rows or after ?5
// workspaces, whichever comes first: the lane usually finds fewer quiet
// events than its limit, and an unbounded walk would then read every
// waiting workspace on every claim. Past ?5 backlogs after the cursor, a
// quiet workspace waits for the claimers' turns, as it did before the lane
// (the cursor moves only past workspaces served). ?0 is the test event
// type, ?1 the cursor, ?2 the limit, ?3 the lease in seconds, ?4 the most
// events a quiet workspace has pending, ?5 the most workspaces walked.
// turn is the workspace's step in the walk (0: a test event).
// Each candidate is locked in a lateral subquery of its own, so the walk
// drives the LIMIT in its order: joined to events as claimSQL is, a small
// table's plan scanned events first and took the rows in heap order.
var claimQuietSQL = `WITH RECURSIVE ws(id, wrapped, step) AS (
		(SELECT n.id, n.wrapped, 1 FROM (VALUES (?1::uuid, false)) AS c(id, wrapped)
			CROSS JOIN LATERAL (` + nextWorkspaceSQL("c") + `) n)
		UNION ALL
		SELECT n.id, n.wrapped, ws.step + 1 FROM ws CROSS JOIN LATERAL (` + nextWorkspaceSQL("ws") + `) n
		WHERE ws.step < ?5
	), quiet(id, turn) AS (
		SELECT ws.id, ws.step FROM ws
		WHERE (SELECT count(*) FROM (SELECT 1 FROM events e
			WHERE e.workspace_id = ws.id AND e.dispatched_at IS NULL LIMIT ?4 + 1) p) <= ?4
	), picked(id, turn) AS (
		SELECT h.id, q.turn FROM quiet q CROSS JOIN LATERAL (
			SELECT e.id FROM events e
			WHERE e.workspace_id = q.id AND e.type <> ?0 AND ` + claimableSQL + `
			ORDER BY e.date_created, e.id LIMIT ?4) h
	), tests(id, turn) AS (
		SELECT e.id, 0 FROM events e WHERE e.type = ?0 AND ` + claimableSQL + `
		ORDER BY e.date_created, e.id LIMIT ?2
	)
	UPDATE events u SET dispatch_claimed_until = now() + make_interval(secs => ?3)
	FROM (SELECT l.id, t.turn FROM (SELECT id, turn FROM tests UNION ALL SELECT id, turn FROM picked) t
		CROSS JOIN LATERAL (SELECT e.id FROM events e WHERE e.id = t.id AND ` + claimableSQL + `
			FOR UPDATE SKIP LOCKED) l
		LIMIT ?2) c
	WHERE u.id = c.id
	RETURNING u.id, u.workspace_id, u.type, u.date_created, u.recipients, u.trace_context, c.turn`

// QuietWalk is the most workspaces with events pending a ClaimQuiet walks.
const QuietWalk = 1024

// ClaimQuiet leases up to limit undispatched events of quiet workspaces,
// those with at most quiet events undispatched, test events first
// (claimQuietSQL), and returns them test events first, then by workspace in
// rotation, oldest first within each. It is the outbox's quiet lane: a
// workspace that publishes a few events now and then gets them started
// beside another's backlog, not behind its claims' waves of starts. turns
// is the lane's own rotation (nil: start at the lowest workspace id).
func (e Events) ClaimQuiet(ctx context.Context, limit, quiet int, lease time.Duration, turns *ClaimTurns) ([]models.Event, error) {
	after := turns.lock()
	defer turns.unlock()
	var rows []claimedRow
	if err := e.db.NewRaw(claimQuietSQL, models.EventWebhookTest, after, limit, lease.Seconds(), quiet, QuietWalk).Scan(ctx, &rows); err != nil {
		return nil, translate(err, nil)
	}
	slices.SortFunc(rows, func(a, b claimedRow) int {
		return cmp.Or(cmp.Compare(a.Turn, b.Turn), a.DateCreated.Compare(b.DateCreated), slices.Compare(a.ID[:], b.ID[:]))
	})
	return claimedEvents(rows, turns), nil
}

-- The event outbox claims in turns across workspaces (store.Events.
-- ClaimUndispatched): it finds the workspaces with pending events and walks
-- each one's pending events oldest first, (date_created, id) breaking ties,
-- so a claim reads about as many entries as it leases, whatever the backlog.
-- The build blocks writes to events while it reads the table; on a large
-- table create the index CONCURRENTLY beforehand and this does nothing.
SET LOCAL lock_timeout = '5s';
CREATE INDEX IF NOT EXISTS events_undispatched_workspace_idx ON events (workspace_id, date_created, id)
    WHERE dispatched_at IS NULL;

-- Test events are claimed before the turns: a few rows, found at once.
CREATE INDEX IF NOT EXISTS events_undispatched_test_idx ON events (date_created, id)
    WHERE dispatched_at IS NULL AND type = 'webhook.test';

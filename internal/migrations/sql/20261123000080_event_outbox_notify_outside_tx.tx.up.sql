SET LOCAL lock_timeout = '5s';

-- The API notifies the workers itself, after the event's transaction has
-- committed and in a statement of its own (internal/outbox.Notifier): a
-- NOTIFY inside the insert's transaction made every publish commit under
-- PostgreSQL's one cluster-wide notify lock, held through the WAL flush,
-- so publishes committed one at a time.
DROP TRIGGER IF EXISTS events_notify_outbox ON events;
DROP FUNCTION IF EXISTS notify_event_outbox();

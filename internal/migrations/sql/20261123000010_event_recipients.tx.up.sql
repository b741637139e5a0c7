-- Recipients are fixed when an event is accepted: the ids of the enabled
-- subscriptions that take its type at that instant, written by the same
-- statement that stores the event. A subscription created or re-enabled
-- later never receives older events; one disabled or deleted later is
-- still skipped at each attempt. NULL only for events stored before this
-- migration, whose workflows plan their recipients as before.
-- Give up rather than queue every reader behind this ALTER while a long
-- transaction holds the table; the migration can simply be run again.
SET LOCAL lock_timeout = '5s';
ALTER TABLE events ADD COLUMN IF NOT EXISTS recipients uuid[];

-- Events still waiting in the outbox get the recipients they would have had.
UPDATE events ev SET recipients = ARRAY(
    SELECT s.id FROM webhook_subscriptions s
    WHERE s.workspace_id = ev.workspace_id AND s.enabled AND s.event_types @> ARRAY[ev.type]
    ORDER BY s.id)
WHERE ev.dispatched_at IS NULL AND ev.recipients IS NULL;

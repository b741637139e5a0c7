SET LOCAL lock_timeout = '5s';

CREATE OR REPLACE FUNCTION notify_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('event_outbox', '');
    RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS events_notify_outbox ON events;
CREATE TRIGGER events_notify_outbox
    AFTER INSERT ON events
    FOR EACH ROW WHEN (NEW.dispatched_at IS NULL) EXECUTE FUNCTION notify_event_outbox();

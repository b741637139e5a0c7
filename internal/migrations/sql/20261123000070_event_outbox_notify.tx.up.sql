SET LOCAL lock_timeout = '5s';

-- Every statement that stores events wakes the workers' outbox dispatchers
-- (LISTEN event_outbox) when its transaction commits, so a publish need not
-- start the event's workflow itself: it inserts the row and answers. Only
-- rows left undispatched notify (an event no subscription takes is stored
-- dispatched). The payload is empty on purpose: identical notifications of
-- one transaction fold into one, and the dispatcher claims whatever is
-- waiting. A dispatcher that misses a notification (reconnecting) still
-- finds the row on its periodic sweep.
CREATE FUNCTION notify_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('event_outbox', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER events_notify_outbox
    AFTER INSERT ON events
    FOR EACH ROW WHEN (NEW.dispatched_at IS NULL) EXECUTE FUNCTION notify_event_outbox();

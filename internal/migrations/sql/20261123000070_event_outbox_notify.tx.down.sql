SET LOCAL lock_timeout = '5s';

DROP TRIGGER IF EXISTS events_notify_outbox ON events;
DROP FUNCTION IF EXISTS notify_event_outbox();

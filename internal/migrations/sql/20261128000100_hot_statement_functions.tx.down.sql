SET LOCAL lock_timeout = '5s';
ALTER FUNCTION webhook_delivery_counts_add() RESET plan_cache_mode;
ALTER FUNCTION webhook_send_acquire(uuid, uuid, integer, interval) RESET plan_cache_mode;
DROP FUNCTION IF EXISTS webhook_record_attempt_v1(uuid, uuid, uuid, integer, boolean, integer, text, integer, text,
    timestamptz, timestamptz, text, timestamptz, boolean, boolean, interval, interval, uuid, interval);
DROP FUNCTION IF EXISTS webhook_attempt_state_v1(uuid, uuid, integer, uuid, integer, interval);
DROP FUNCTION IF EXISTS event_create_v1(uuid, uuid, text, jsonb, timestamptz, jsonb, uuid);

SET LOCAL lock_timeout = '5s';
CREATE OR REPLACE FUNCTION webhook_delivery_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_delivery_counts AS c (subscription_id, slot, n)
    SELECT subscription_id, pg_backend_pid() % 16, count(*) FROM webhook_delivery_counts_new
    GROUP BY subscription_id ORDER BY subscription_id
    ON CONFLICT (subscription_id, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END;
$$;
ALTER FUNCTION webhook_send_acquire(uuid, uuid, integer, interval) RESET plan_cache_mode;
DROP FUNCTION IF EXISTS webhook_record_attempt_v1(uuid, uuid, uuid, integer, boolean, integer, text, integer, text,
    timestamptz, timestamptz, text, timestamptz, boolean, boolean, interval, interval, uuid, interval);
DROP FUNCTION IF EXISTS webhook_attempt_state_v1(uuid, uuid, integer, uuid, integer, interval);
DROP FUNCTION IF EXISTS event_create_v1(uuid, uuid, text, jsonb, timestamptz, jsonb, uuid);

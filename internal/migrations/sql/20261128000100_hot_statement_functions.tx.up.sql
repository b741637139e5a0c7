-- The statements every publish and every delivery attempt make, as
-- functions: the event insert, the attempt's state (with its send lease)
-- and the attempt's record. PL/pgSQL keeps each inner statement's plan
-- for the session, so the one statement the service sends per call
-- (SELECT * FROM f(p_x => ...)) is all that is parsed and planned anew:
-- cheap, where planning the large statements themselves cost as much as
-- running them. Each function sets plan_cache_mode for itself: every
-- lookup is by key, so one generic plan serves every call, while other
-- queries of the same session keep the server's choice.
--
-- The names carry a version: a release that changes what a function takes
-- or returns adds the next version beside it, so the processes of the
-- previous release keep calling theirs during a rolling deploy; a later
-- migration drops the old one.
SET LOCAL lock_timeout = '5s';

-- event_create_v1 stores an event with its recipients fixed: the
-- workspace's enabled subscriptions to its type, in id order, but
-- p_except (an operational event never goes to the subscription it is
-- about). An event nobody takes needs no workflow and is stored
-- dispatched; any other waits in the outbox (dispatched_at NULL). One
-- statement, so the recipients are those of the insert's snapshot (OFFSET
-- 0 keeps the planner from copying the sub-select into both columns).
CREATE FUNCTION event_create_v1(p_id uuid, p_workspace_id uuid, p_type text, p_data jsonb,
    p_now timestamptz, p_trace_context jsonb DEFAULT NULL, p_except uuid DEFAULT NULL,
    OUT recipients uuid[], OUT dispatched_at timestamptz)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO events AS ev (id, workspace_id, type, data, date_created, recipients, dispatched_at, trace_context)
    SELECT p_id, p_workspace_id, p_type, p_data, p_now, r.ids,
        CASE WHEN cardinality(r.ids) = 0 THEN p_now END, p_trace_context
    FROM (SELECT ARRAY(SELECT s.id FROM webhook_subscriptions s
            WHERE s.workspace_id = p_workspace_id AND s.enabled AND s.event_types @> ARRAY[p_type]
                AND s.id IS DISTINCT FROM p_except
            ORDER BY s.id) AS ids
        OFFSET 0) AS r
    RETURNING ev.recipients, ev.dispatched_at INTO recipients, dispatched_at;
END;
$$;

-- webhook_attempt_state_v1 is what an attempt reads before it sends: the
-- subscription (s_), the event (e_) and this attempt's record if a run
-- already wrote it (d_), each NULL when missing; the event's data only
-- when the attempt will send. Given a lease key it also asks
-- webhook_send_acquire (g_) when the attempt would send.
CREATE FUNCTION webhook_attempt_state_v1(p_subscription_id uuid, p_event_id uuid, p_attempt integer,
    p_lease_key uuid DEFAULT NULL, p_lease_max integer DEFAULT NULL, p_lease_duration interval DEFAULT NULL,
    OUT s_id uuid, OUT s_workspace_id uuid, OUT s_url text, OUT s_enabled boolean, OUT s_secret bytea,
    OUT s_previous_secret bytea, OUT s_previous_expires_at timestamptz, OUT s_rate_limit integer, OUT s_headers jsonb,
    OUT e_id uuid, OUT e_workspace_id uuid, OUT e_type text, OUT e_date_created timestamptz, OUT e_data jsonb,
    OUT d_id uuid, OUT d_success boolean, OUT d_status_code integer, OUT d_response_body text,
    OUT d_response_time_ms integer, OUT d_error_message text, OUT d_date_created timestamptz,
    OUT g_ok boolean, OUT g_reason text, OUT g_wait_us bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    -- One statement, so the three rows come from one snapshot. The
    -- previous secret only while valid by the database's clock.
    SELECT s.id, s.workspace_id, s.url, s.enabled, s.secret_ciphertext,
        CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_ciphertext END,
        CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_expires_at END,
        s.rate_limit_per_second, s.headers,
        e.id, e.workspace_id, e.type, e.date_created,
        CASE WHEN d.id IS NULL AND s.enabled THEN e.data END,
        d.id, d.success, d.status_code, d.response_body, d.response_time_ms, d.error_message, d.date_created
    INTO s_id, s_workspace_id, s_url, s_enabled, s_secret,
        s_previous_secret, s_previous_expires_at,
        s_rate_limit, s_headers,
        e_id, e_workspace_id, e_type, e_date_created,
        e_data,
        d_id, d_success, d_status_code, d_response_body, d_response_time_ms, d_error_message, d_date_created
    FROM (VALUES (1)) AS one (x)
    LEFT JOIN webhook_subscriptions s ON s.id = p_subscription_id
    LEFT JOIN events e ON e.id = p_event_id
    LEFT JOIN webhook_deliveries d
        ON d.subscription_id = p_subscription_id AND d.event_id = p_event_id AND d.attempt_number = p_attempt;

    IF p_lease_key IS NOT NULL AND d_id IS NULL AND s_enabled AND e_id IS NOT NULL THEN
        SELECT a.ok, a.reason, a.wait_us INTO g_ok, g_reason, g_wait_us
        FROM webhook_send_acquire(p_subscription_id, p_lease_key, p_lease_max, p_lease_duration) AS a;
    END IF;
END;
$$;

-- webhook_record_attempt_v1 writes one attempt's record unless a run
-- already wrote it (record_id NULL then), and with it, atomically: the
-- delivery's state, the subscription's health, the operational events that
-- follow (emitted, in type order; dispatch: one awaits its workflow), and,
-- even when the record existed, the send lease given back and a receiver's
-- pause. Locks are taken in a deletion's order, the previous release's
-- statement's: the subscription FOR KEY SHARE first (only a deletion waits
-- for it), then its record, its row again only when its health changes (so
-- successes never queue on it), the state row, the events, the send
-- limits, and last the record counter's slot, which the function counts
-- itself (step 6): its insert tells webhook_delivery_counts_add to skip
-- it. Taken as the insert ended, the slot was held through every later
-- step, so the attempts of one subscription queued on its 16 slots behind
-- the send limits' row (bench scenario 1: the record took 7.4 ms a call
-- against the CTE's 3.3), and the previous release's workers, taking it
-- last, could deadlock with these.
CREATE FUNCTION webhook_record_attempt_v1(
    p_id uuid, p_subscription_id uuid, p_event_id uuid, p_attempt integer,
    p_success boolean, p_status_code integer, p_response_body text, p_response_time_ms integer,
    p_error_message text, p_recorded_at timestamptz,
    p_now timestamptz, p_status text, p_next_attempt_at timestamptz,
    p_exhausts boolean, p_may_recover boolean,
    p_disable_after interval, p_disable_min_span interval,
    p_lease uuid, p_pause interval,
    OUT record_id uuid, OUT emitted text[], OUT dispatch boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_workspace_id uuid;
    v_failing_since timestamptz;
    v_first_event_id uuid;
    v_owed_recovery boolean;
    v_disable boolean;
    v_recovered boolean := false;
    v_dispatched_at timestamptz;
    op record;
BEGIN
    emitted := '{}';
    dispatch := false;

    -- 1. The record, unless the subscription is gone or a run wrote it.
    PERFORM FROM webhook_subscriptions s WHERE s.id = p_subscription_id FOR KEY SHARE;
    IF FOUND THEN
        PERFORM set_config('webhook.counts_by_caller', 'on', true);
        INSERT INTO webhook_deliveries AS d (id, subscription_id, event_id, attempt_number, success, status_code,
            response_body, response_time_ms, error_message, date_created)
        VALUES (p_id, p_subscription_id, p_event_id, p_attempt, p_success, p_status_code,
            p_response_body, p_response_time_ms, p_error_message, p_recorded_at)
        ON CONFLICT (subscription_id, event_id, attempt_number) DO NOTHING
        RETURNING d.id INTO record_id;
        PERFORM set_config('webhook.counts_by_caller', 'off', true);
    END IF;

    IF record_id IS NOT NULL THEN
        -- 2. The subscription's health, locked and written only when it
        -- changes: a success ends a failing spell or an owed recovery; a
        -- failure starts a spell, exhausts a schedule, or disables it after
        -- p_disable_after of failures across two or more events spanning
        -- p_disable_min_span.
        SELECT s.workspace_id, s.failing_since, s.failing_first_event_id, s.exhausted_since_success, x.disable
        INTO v_workspace_id, v_failing_since, v_first_event_id, v_owed_recovery, v_disable
        FROM webhook_subscriptions s
        CROSS JOIN LATERAL (SELECT coalesce(NOT p_success AND s.enabled AND p_disable_after > interval '0'
            AND s.failing_first_event_id <> p_event_id
            AND p_now - s.failing_since >= p_disable_after
            AND p_now - s.failing_since >= p_disable_min_span, false) AS disable) AS x
        WHERE s.id = p_subscription_id AND CASE WHEN p_success
            THEN s.failing_since IS NOT NULL OR (s.exhausted_since_success AND p_may_recover)
            ELSE s.failing_since IS NULL OR p_exhausts OR x.disable END
        FOR NO KEY UPDATE OF s;
        IF FOUND THEN
            UPDATE webhook_subscriptions s SET
                failing_since = CASE WHEN p_success THEN NULL ELSE coalesce(v_failing_since, p_now) END,
                failing_first_event_id = CASE WHEN p_success THEN NULL
                    WHEN v_failing_since IS NULL THEN p_event_id ELSE v_first_event_id END,
                exhausted_since_success = CASE WHEN p_success AND p_may_recover THEN false
                    ELSE v_owed_recovery OR p_exhausts END,
                enabled = s.enabled AND NOT v_disable,
                disabled_reason = CASE WHEN v_disable THEN 'failing' ELSE s.disabled_reason END,
                disabled_at = CASE WHEN v_disable THEN p_now ELSE s.disabled_at END,
                date_updated = CASE WHEN v_disable THEN p_now ELSE s.date_updated END
            WHERE s.id = p_subscription_id;
            v_recovered := p_success AND p_may_recover AND v_owed_recovery;
        END IF;

        -- 3. The delivery's state: a succeeded one stays succeeded (the
        -- receiver has it); an older attempt's record never overwrites a
        -- newer one's.
        INSERT INTO webhook_delivery_states AS ds (event_id, subscription_id, status, attempts, next_attempt_at,
            last_status_code, event_date_created, date_updated)
        SELECT e.id, p_subscription_id, p_status, p_attempt, p_next_attempt_at, p_status_code, e.date_created, p_now
        FROM events e WHERE e.id = p_event_id
        ON CONFLICT (event_id, subscription_id) DO UPDATE SET
            status = CASE WHEN ds.status = 'succeeded' THEN ds.status ELSE excluded.status END,
            attempts = excluded.attempts,
            next_attempt_at = CASE WHEN ds.status = 'succeeded' THEN NULL ELSE excluded.next_attempt_at END,
            last_status_code = excluded.last_status_code,
            date_updated = excluded.date_updated
        WHERE ds.attempts <= excluded.attempts;

        -- 4. The operational events the health change raises, to the
        -- workspace's other subscriptions.
        IF v_workspace_id IS NOT NULL THEN
            FOR op IN SELECT t.type, t.data FROM (VALUES
                    ('webhook.delivery.exhausted', p_exhausts,
                        jsonb_build_object('subscriptionId', p_subscription_id, 'eventId', p_event_id)),
                    ('webhook.delivery.recovered', v_recovered,
                        jsonb_build_object('subscriptionId', p_subscription_id, 'eventId', p_event_id)),
                    ('webhook.disabled', v_disable,
                        jsonb_build_object('subscriptionId', p_subscription_id, 'reason', 'failing'))
                ) AS t (type, wanted, data)
                WHERE t.wanted ORDER BY t.type
            LOOP
                SELECT c.dispatched_at INTO v_dispatched_at
                FROM event_create_v1(gen_random_uuid(), v_workspace_id, op.type, op.data, p_now,
                    p_except => p_subscription_id) AS c;
                emitted := emitted || op.type;
                dispatch := dispatch OR v_dispatched_at IS NULL;
            END LOOP;
        END IF;
    END IF;

    -- 5. The send lease back and the receiver's pause, record or not: a
    -- retried run must free what it holds.
    IF p_lease IS NOT NULL OR p_pause > interval '0' THEN
        UPDATE webhook_send_limits l SET
            leases = ARRAY(SELECT x FROM unnest(l.leases) AS x
                WHERE x.id IS DISTINCT FROM p_lease AND x.held_until > clock_timestamp()),
            paused_until = CASE WHEN p_pause > interval '0'
                THEN greatest(l.paused_until, clock_timestamp() + p_pause) ELSE l.paused_until END
        WHERE l.subscription_id = p_subscription_id;
    END IF;

    -- 6. The record counter, last (see above).
    IF record_id IS NOT NULL THEN
        INSERT INTO webhook_delivery_counts AS c (subscription_id, slot, n)
        VALUES (p_subscription_id, pg_backend_pid() % 16, 1)
        ON CONFLICT (subscription_id, slot) DO UPDATE SET n = c.n + 1;
    END IF;
END;
$$;

-- The functions the hot statements call, and the trigger every other
-- record insert fires, plan generically too (they were planned anew on
-- many calls when left to choose: a tenth of the database's CPU in bench
-- scenario 2). The trigger skips an insert whose caller counts its rows
-- itself (webhook_record_attempt_v1), for this transaction's statements
-- between its two set_config calls; every other insert, the previous
-- release's included, is counted here as before.
ALTER FUNCTION webhook_send_acquire(uuid, uuid, integer, interval) SET plan_cache_mode = force_generic_plan;
CREATE OR REPLACE FUNCTION webhook_delivery_counts_add() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF current_setting('webhook.counts_by_caller', true) = 'on' THEN
        RETURN NULL;
    END IF;
    INSERT INTO webhook_delivery_counts AS c (subscription_id, slot, n)
    SELECT subscription_id, pg_backend_pid() % 16, count(*) FROM webhook_delivery_counts_new
    GROUP BY subscription_id ORDER BY subscription_id
    ON CONFLICT (subscription_id, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END;
$$;

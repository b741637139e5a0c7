SET LOCAL lock_timeout = '5s';

-- Per-subscription send limits (issue 12), shared by every worker replica
-- through this one row per subscription, so N replicas together honour
-- them (an in-memory limiter would admit N times as much).
--
-- leases are the attempts in flight or about to be: a lease is taken when
-- an attempt may send (starts_at now) or reserves the rate's next free
-- instant (starts_at later; the attempt comes back then and finds it). Its
-- id is the attempt's (event, attempt number) key, so a retried run of the
-- same attempt takes its own lease again instead of a second one, and each
-- lease ends at held_until on its own, so a crashed worker's slot frees
-- itself. tat is the rate's GCRA theoretical arrival time (NULL until a
-- rate applies). paused_until is a receiver's Retry-After.
CREATE TYPE webhook_send_lease AS (id uuid, starts_at timestamptz, held_until timestamptz);

CREATE TABLE IF NOT EXISTS webhook_send_limits (
    subscription_id uuid PRIMARY KEY REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    paused_until    timestamptz,
    tat             timestamptz,
    leases          webhook_send_lease[] NOT NULL DEFAULT '{}'
);

-- webhook_send_acquire decides, under the subscription's row lock and by
-- the database's clock, whether attempt p_key may send now: not paused, a
-- lease among at most p_max, and a token of the subscription's
-- rate_limit_per_second (burst = the rate). ok, or the reason refused
-- (paused, rate, in_flight) and the wait in microseconds: until the pause
-- ends, until the lease reserved for this attempt starts, or until the
-- earliest lease ends (an upper bound; releases usually come sooner).
-- One call is one round trip; its row lock serialises the replicas.
CREATE FUNCTION webhook_send_acquire(p_sub uuid, p_key uuid, p_max integer, p_lease interval,
    OUT ok boolean, OUT reason text, OUT wait_us bigint)
LANGUAGE plpgsql AS $$
DECLARE
    l webhook_send_limits;
    rate integer;
    ts timestamptz;
    mine webhook_send_lease;
    live webhook_send_lease[];
    t interval;
    start timestamptz;
BEGIN
    SELECT s.rate_limit_per_second INTO rate FROM webhook_subscriptions s WHERE s.id = p_sub;
    SELECT * INTO l FROM webhook_send_limits WHERE subscription_id = p_sub FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO webhook_send_limits (subscription_id) VALUES (p_sub) ON CONFLICT DO NOTHING;
        SELECT * INTO l FROM webhook_send_limits WHERE subscription_id = p_sub FOR UPDATE;
    END IF;
    -- The clock after the lock: a wait for another replica's acquire must
    -- not leave this one deciding on an older instant.
    ts := clock_timestamp();
    live := ARRAY(SELECT x FROM unnest(l.leases) AS x WHERE x.held_until > ts AND x.id <> p_key);
    SELECT x.* INTO mine FROM unnest(l.leases) AS x WHERE x.held_until > ts AND x.id = p_key;
    ok := false;
    IF l.paused_until > ts THEN
        -- A lease of this attempt is given up: it would hold a slot
        -- through the pause.
        reason := 'paused';
        wait_us := (extract(epoch FROM l.paused_until - ts) * 1000000)::bigint;
    ELSIF mine.id IS NOT NULL THEN
        -- This attempt's own lease: reserved earlier (its token already
        -- taken), or held by an earlier run of it that never released.
        IF mine.starts_at <= ts THEN
            ok := true;
            live := live || ROW(p_key, ts, ts + p_lease)::webhook_send_lease;
        ELSE
            reason := 'rate';
            wait_us := (extract(epoch FROM mine.starts_at - ts) * 1000000)::bigint;
            live := live || mine;
        END IF;
    ELSIF cardinality(live) >= p_max THEN
        reason := 'in_flight';
        wait_us := (extract(epoch FROM (SELECT min(x.held_until) FROM unnest(live) AS x) - ts) * 1000000)::bigint;
    ELSE
        start := ts;
        IF rate IS NOT NULL THEN
            -- GCRA: each send moves tat one interval on; a send may start
            -- once tat is at most a burst (rate intervals) ahead of it.
            t := make_interval(secs => 1.0 / rate);
            l.tat := greatest(l.tat, ts) + t;
            start := greatest(ts, l.tat - t * rate);
        END IF;
        live := live || ROW(p_key, start, start + p_lease)::webhook_send_lease;
        IF start <= ts THEN
            ok := true;
        ELSE
            reason := 'rate';
            wait_us := (extract(epoch FROM start - ts) * 1000000)::bigint;
        END IF;
    END IF;
    UPDATE webhook_send_limits SET leases = live, tat = l.tat WHERE subscription_id = p_sub;
END;
$$;

-- Exact delivery-record totals without counting rows (issue 10): listing a
-- subscription's records used to count all of them on every page (a window
-- count that also buffered every row). webhook_delivery_counts holds the
-- number of records per subscription, split over up to 16 slots: a
-- subscription's total is the sum of its slots. Slots exist because every
-- attempt's insert updates a counter and holds its row lock until commit;
-- with one row per subscription, concurrent attempts to one receiver would
-- queue behind each other's commits. Each statement adds to the slot of
-- its backend (pg_backend_pid() % 16), so the API's and the worker's pooled
-- connections mostly touch different rows.
--
-- Triggers keep the counts, not statements in the store: records are
-- removed by the retention purge, by an event's deletion and by a
-- subscription's deletion (cascades), and may be inserted in batches by
-- other code; a trigger sees every one of them, in the same transaction as
-- the change. They run per statement with transition tables, so a batch or
-- a purge of thousands of records costs one counter update per
-- subscription.
SET LOCAL lock_timeout = '5s';

CREATE TABLE webhook_delivery_counts (
    subscription_id uuid     NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    slot            smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
    n               bigint   NOT NULL,
    PRIMARY KEY (subscription_id, slot)
);

-- Rows are upserted in key order, so two statements never wait on each
-- other's counters in opposite orders (no deadlock).
CREATE FUNCTION webhook_delivery_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_delivery_counts AS c (subscription_id, slot, n)
    SELECT subscription_id, pg_backend_pid() % 16, count(*) FROM webhook_delivery_counts_new
    GROUP BY subscription_id ORDER BY subscription_id
    ON CONFLICT (subscription_id, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END;
$$;

-- A subscription with records has at least one slot (made by an insert or
-- by the backfill below); removal subtracts from its lowest slot, so it only
-- updates (a slot may go negative; the sum stays exact). A subscription
-- being deleted takes its slots with it by cascade, in whichever order the
-- cascades run: an update that finds no row does nothing, and never
-- re-creates one (an insert would fail the foreign key).
CREATE FUNCTION webhook_delivery_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE webhook_delivery_counts AS c SET n = c.n - o.n
    FROM (SELECT subscription_id, count(*) AS n FROM webhook_delivery_counts_old
          GROUP BY subscription_id) AS o
    WHERE c.subscription_id = o.subscription_id
      AND c.slot = (SELECT min(m.slot) FROM webhook_delivery_counts AS m
                    WHERE m.subscription_id = o.subscription_id);
    RETURN NULL;
END;
$$;

CREATE TRIGGER webhook_delivery_counts_insert AFTER INSERT ON webhook_deliveries
    REFERENCING NEW TABLE AS webhook_delivery_counts_new
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_counts_add();
CREATE TRIGGER webhook_delivery_counts_delete AFTER DELETE ON webhook_deliveries
    REFERENCING OLD TABLE AS webhook_delivery_counts_old
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_counts_remove();

-- The triggers exist and hold their lock on webhook_deliveries until
-- commit, so no write slips between them and this count (which blocks
-- record inserts for its duration: about half a second per million
-- records).
INSERT INTO webhook_delivery_counts (subscription_id, slot, n)
SELECT subscription_id, 0, count(*) FROM webhook_deliveries GROUP BY subscription_id;

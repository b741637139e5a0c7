-- Hardening of the counters of 20261123000050 (project_counts) and
-- 20261123000060 (webhook_delivery_counts), after review:
--
-- 1. Removals lock counter rows in key order. The removal triggers of
--    050/060 updated the counters with one UPDATE … FROM, which locks rows
--    in whatever order its join produces them (a hash table's order, which
--    differs with the statement's keys and plan): two statements removing
--    rows of several workspaces or subscriptions at once (a purge batch
--    and an operator's DELETE, two events deleted by cascade) could lock
--    two counters in opposite orders and deadlock. Now each removal walks
--    its keys in order and updates one counter at a time, the same order
--    the inserts' upserts use (INSERT … SELECT … ORDER BY key), so
--    statements queue on a shared counter instead.
-- 2. TRUNCATE fires no DELETE trigger: it now resets the counters of the
--    truncated table (also when a parent's TRUNCATE … CASCADE takes it).
-- 3. The name filter's trigram index is per workspace: a GIN index on
--    (workspace_id, name gin_trgm_ops) (btree_gin gives uuid its GIN
--    operator class), so a workspace's ?name= filter reads only its own
--    matches, never other tenants'.
--
-- The index is built first, without CONCURRENTLY (a migration runs in one
-- transaction): project writes wait for the build (reads go on); the
-- triggers on webhook_deliveries come last, so record writes wait only for
-- the commit. The old index is dropped at the very end, as its
-- ACCESS EXCLUSIVE lock then lasts only until the commit.
SET LOCAL lock_timeout = '5s';

-- btree_gin is a trusted extension (PostgreSQL 13+), like pg_trgm: the
-- database owner, or any role with CREATE on the database, may create it.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX projects_workspace_name_trgm_idx ON projects USING gin (workspace_id, name gin_trgm_ops);

-- 1. One counter at a time, in (workspace_id, task_type) order.
CREATE OR REPLACE FUNCTION project_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT workspace_id, task_type, count(*) AS n FROM project_counts_old
             GROUP BY workspace_id, task_type ORDER BY workspace_id, task_type
    LOOP
        UPDATE project_counts SET n = n - o.n
        WHERE workspace_id = o.workspace_id AND task_type = o.task_type;
    END LOOP;
    RETURN NULL;
END;
$$;

-- A moved project's two counters, in key order too (two projects moved
-- in opposite directions by concurrent statements once locked them in
-- opposite orders).
CREATE OR REPLACE FUNCTION project_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (OLD.workspace_id, OLD.task_type) < (NEW.workspace_id, NEW.task_type) THEN
        UPDATE project_counts SET n = n - 1
        WHERE workspace_id = OLD.workspace_id AND task_type = OLD.task_type;
    END IF;
    INSERT INTO project_counts AS c (workspace_id, task_type, n)
    VALUES (NEW.workspace_id, NEW.task_type, 1)
    ON CONFLICT (workspace_id, task_type) DO UPDATE SET n = c.n + 1;
    IF (OLD.workspace_id, OLD.task_type) > (NEW.workspace_id, NEW.task_type) THEN
        UPDATE project_counts SET n = n - 1
        WHERE workspace_id = OLD.workspace_id AND task_type = OLD.task_type;
    END IF;
    RETURN NULL;
END;
$$;

-- 2. projects is empty after a TRUNCATE (which holds it ACCESS EXCLUSIVE,
-- so no insert is under way): no counter stays.
CREATE FUNCTION project_counts_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM project_counts;
    RETURN NULL;
END;
$$;
CREATE TRIGGER project_counts_truncate AFTER TRUNCATE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION project_counts_reset();

-- 1. One subscription at a time, in subscription_id order, each taking
-- from its lowest slot (one row per subscription, as before).
CREATE OR REPLACE FUNCTION webhook_delivery_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT subscription_id, count(*) AS n FROM webhook_delivery_counts_old
             GROUP BY subscription_id ORDER BY subscription_id
    LOOP
        UPDATE webhook_delivery_counts SET n = n - o.n
        WHERE subscription_id = o.subscription_id
          AND slot = (SELECT min(m.slot) FROM webhook_delivery_counts AS m
                      WHERE m.subscription_id = o.subscription_id);
    END LOOP;
    RETURN NULL;
END;
$$;

-- 2. The same for the records.
CREATE FUNCTION webhook_delivery_counts_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_delivery_counts;
    RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_delivery_counts_truncate AFTER TRUNCATE ON webhook_deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_counts_reset();

-- 3. Last: the name-only trigram index, which the composite one replaces.
DROP INDEX projects_name_trgm_idx;

-- Exact project totals without counting rows (issue 10): GET /v1/projects
-- used to count every project of the workspace on every page. project_counts
-- holds the number of projects per (workspace, task type); a workspace's
-- total is the sum of its (at most four) rows. The creation cap reads it too.
--
-- Triggers keep the counts, not explicit statements in the store: projects
-- are also written by bootstrap/seed paths, tests and operators' SQL, and a
-- workspace's deletion removes its projects by cascade; a trigger sees every
-- one of them, in the same transaction as the change, so a count can never
-- drift from the rows. The triggers are per statement with transition
-- tables, so a bulk insert or delete costs one counter update per
-- (workspace, task type), not one per row.
SET LOCAL lock_timeout = '5s';

CREATE TABLE project_counts (
    workspace_id uuid   NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_type    text   NOT NULL,
    n            bigint NOT NULL,
    PRIMARY KEY (workspace_id, task_type)
);

-- Rows are upserted in key order, so two statements never wait on each
-- other's counters in opposite orders (no deadlock).
CREATE FUNCTION project_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO project_counts AS c (workspace_id, task_type, n)
    SELECT workspace_id, task_type, count(*) FROM project_counts_new
    GROUP BY workspace_id, task_type ORDER BY workspace_id, task_type
    ON CONFLICT (workspace_id, task_type) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END;
$$;

-- Every project has its counter row (made by its insert, or by the
-- backfill below), so removal only updates. A workspace being deleted takes
-- its counters with it by cascade, in whichever order the cascades run: an
-- update that finds no row does nothing, and never re-creates one.
CREATE FUNCTION project_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE project_counts AS c SET n = c.n - o.n
    FROM (SELECT workspace_id, task_type, count(*) AS n FROM project_counts_old
          GROUP BY workspace_id, task_type) AS o
    WHERE c.workspace_id = o.workspace_id AND c.task_type = o.task_type;
    RETURN NULL;
END;
$$;

-- No API call changes a project's workspace or task type today; an
-- operator's UPDATE that does moves the count along.
CREATE FUNCTION project_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE project_counts SET n = n - 1
    WHERE workspace_id = OLD.workspace_id AND task_type = OLD.task_type;
    INSERT INTO project_counts AS c (workspace_id, task_type, n)
    VALUES (NEW.workspace_id, NEW.task_type, 1)
    ON CONFLICT (workspace_id, task_type) DO UPDATE SET n = c.n + 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER project_counts_insert AFTER INSERT ON projects
    REFERENCING NEW TABLE AS project_counts_new
    FOR EACH STATEMENT EXECUTE FUNCTION project_counts_add();
CREATE TRIGGER project_counts_delete AFTER DELETE ON projects
    REFERENCING OLD TABLE AS project_counts_old
    FOR EACH STATEMENT EXECUTE FUNCTION project_counts_remove();
CREATE TRIGGER project_counts_update AFTER UPDATE OF workspace_id, task_type ON projects
    FOR EACH ROW WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id OR OLD.task_type IS DISTINCT FROM NEW.task_type)
    EXECUTE FUNCTION project_counts_move();

-- The triggers exist and hold their lock on projects (taken by CREATE
-- TRIGGER, kept until commit), so no write slips between them and this.
INSERT INTO project_counts (workspace_id, task_type, n)
SELECT workspace_id, task_type, count(*) FROM projects GROUP BY workspace_id, task_type;

-- The name filter is a substring match (ILIKE '%…%'), which no btree
-- serves; a trigram index does, for patterns of three characters or more
-- (shorter ones fall back to the workspace's btree). pg_trgm is a trusted
-- extension (PostgreSQL 13+): the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX projects_name_trgm_idx ON projects USING gin (name gin_trgm_ops);

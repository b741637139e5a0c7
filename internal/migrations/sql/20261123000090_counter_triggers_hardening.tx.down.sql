-- Back to the counters and the index of 20261123000050/60.
SET LOCAL lock_timeout = '5s';

CREATE INDEX IF NOT EXISTS projects_name_trgm_idx ON projects USING gin (name gin_trgm_ops);

DROP TRIGGER IF EXISTS webhook_delivery_counts_truncate ON webhook_deliveries;
DROP FUNCTION IF EXISTS webhook_delivery_counts_reset();
CREATE OR REPLACE FUNCTION webhook_delivery_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP TRIGGER IF EXISTS project_counts_truncate ON projects;
DROP FUNCTION IF EXISTS project_counts_reset();
CREATE OR REPLACE FUNCTION project_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE project_counts AS c SET n = c.n - o.n
    FROM (SELECT workspace_id, task_type, count(*) AS n FROM project_counts_old
          GROUP BY workspace_id, task_type) AS o
    WHERE c.workspace_id = o.workspace_id AND c.task_type = o.task_type;
    RETURN NULL;
END;
$$;
CREATE OR REPLACE FUNCTION project_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE project_counts SET n = n - 1
    WHERE workspace_id = OLD.workspace_id AND task_type = OLD.task_type;
    INSERT INTO project_counts AS c (workspace_id, task_type, n)
    VALUES (NEW.workspace_id, NEW.task_type, 1)
    ON CONFLICT (workspace_id, task_type) DO UPDATE SET n = c.n + 1;
    RETURN NULL;
END;
$$;

DROP INDEX IF EXISTS projects_workspace_name_trgm_idx;
-- btree_gin stays: other objects may have come to use it.

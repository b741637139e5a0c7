SET LOCAL lock_timeout = '5s';
DROP INDEX IF EXISTS projects_name_trgm_idx;
DROP TRIGGER IF EXISTS project_counts_insert ON projects;
DROP TRIGGER IF EXISTS project_counts_delete ON projects;
DROP TRIGGER IF EXISTS project_counts_update ON projects;
DROP FUNCTION IF EXISTS project_counts_add();
DROP FUNCTION IF EXISTS project_counts_remove();
DROP FUNCTION IF EXISTS project_counts_move();
DROP TABLE IF EXISTS project_counts;
-- pg_trgm stays: other objects may have come to use it.

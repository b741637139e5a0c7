SET LOCAL lock_timeout = '5s';
DROP TABLE IF EXISTS workspace_invites;
DROP TRIGGER IF EXISTS workspaces_default_slug ON workspaces;
DROP FUNCTION IF EXISTS workspaces_default_slug();
DROP INDEX IF EXISTS workspaces_slug_key;
ALTER TABLE workspaces
    DROP COLUMN IF EXISTS slug,
    DROP COLUMN IF EXISTS date_updated,
    DROP COLUMN IF EXISTS creator_id;
DROP FUNCTION IF EXISTS workspace_default_slug(text, uuid);

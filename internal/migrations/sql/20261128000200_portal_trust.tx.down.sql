DROP INDEX IF EXISTS portal_sessions_workspace_created_idx;
DROP INDEX IF EXISTS portal_sessions_api_key_idx;
ALTER TABLE portal_sessions
    DROP COLUMN IF EXISTS logo_url,
    DROP COLUMN IF EXISTS application_name,
    DROP COLUMN IF EXISTS api_key_id;

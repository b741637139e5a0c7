-- A portal session lives on its minting key's authority: the key
-- (api_key_id) must stay unrevoked and unexpired, and its owner an admin
-- of the workspace, on every request (store.PortalSessions' lookups join
-- both by primary key). Sessions minted before this migration record no
-- key, so they cannot be checked: they end here (they live a day at most).
-- application_name and logo_url brand the portal's pages for the host
-- application that minted the link.
DELETE FROM portal_sessions;
ALTER TABLE portal_sessions
    ADD COLUMN api_key_id       uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    ADD COLUMN application_name text CHECK (char_length(application_name) BETWEEN 1 AND 100),
    ADD COLUMN logo_url         text CHECK (char_length(logo_url) BETWEEN 9 AND 512);
CREATE INDEX portal_sessions_api_key_idx ON portal_sessions (api_key_id);
-- At most PORTAL_MAX_SESSIONS live sessions per workspace: minting ends
-- the oldest beyond it, found by this index.
CREATE INDEX portal_sessions_workspace_created_idx ON portal_sessions (workspace_id, date_created DESC, id DESC);

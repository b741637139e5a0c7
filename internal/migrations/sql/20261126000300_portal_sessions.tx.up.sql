-- Portal sessions: a short-lived link an admin mints for the people who
-- receive a workspace's webhooks. Only SHA-256 hashes are stored: of the
-- single-use token in the link, and of the cookie secret it is exchanged
-- for (opened_at set, token spent). Both are 240 random bits, so a fast
-- hash suffices, as for API keys.
CREATE TABLE portal_sessions (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    token_hash   bytea NOT NULL,
    cookie_hash  bytea,
    read_only    boolean NOT NULL DEFAULT false,
    date_created timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    opened_at    timestamptz,
    last_seen_at timestamptz,
    CHECK ((cookie_hash IS NULL) = (opened_at IS NULL)),
    CHECK (expires_at > date_created)
);
CREATE UNIQUE INDEX portal_sessions_token_hash_key ON portal_sessions (token_hash);
CREATE UNIQUE INDEX portal_sessions_cookie_hash_key ON portal_sessions (cookie_hash)
    WHERE cookie_hash IS NOT NULL;
CREATE INDEX portal_sessions_workspace_expires_idx ON portal_sessions (workspace_id, expires_at);

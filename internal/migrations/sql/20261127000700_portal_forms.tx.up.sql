-- The consumer portal's forms, safe to submit twice. Every form a page
-- renders carries a one-time token; the first POST with it claims a row
-- (location NULL while its work runs) and records where its answer
-- redirected; a replay (reload, double-click, back-button resubmit) finds
-- the row and is sent there without doing the work again. Only SHA-256
-- hashes of the tokens are stored. In PostgreSQL rather than in a process's
-- memory, because a replay may reach another API replica.
SET LOCAL lock_timeout = '5s';
CREATE TABLE IF NOT EXISTS portal_form_submissions (
    session_id uuid        NOT NULL REFERENCES portal_sessions (id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL,
    claimed_at timestamptz NOT NULL,
    location   text,
    PRIMARY KEY (session_id, token_hash)
);
-- A signing secret the portal shows once, on the page after the POST that
-- made it: sealed with the WEBHOOK_SECRET_KEY ring (bound to the session and
-- the endpoint), deleted by the read that shows it, ignored after
-- expires_at. Both tables go with their session (logout, DELETE, pruning).
CREATE TABLE IF NOT EXISTS portal_secret_stash (
    session_id      uuid        NOT NULL REFERENCES portal_sessions (id) ON DELETE CASCADE,
    subscription_id uuid        NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    sealed_secret   bytea       NOT NULL,
    expires_at      timestamptz NOT NULL,
    PRIMARY KEY (session_id, subscription_id)
);
CREATE INDEX IF NOT EXISTS portal_secret_stash_subscription_idx ON portal_secret_stash (subscription_id);

-- An outbox for API key lifecycle changes, kept on the key's own row so the
-- change and its record commit together. lifecycle_seq counts the changes a
-- key's workflow must hear about (a create with an expiry, every rotation,
-- a revocation) and is bumped in the change's transaction;
-- lifecycle_synced_seq is the newest of them Temporal has accepted a signal
-- for. A key with lifecycle_seq > lifecycle_synced_seq is pending: the API
-- notifies the workflow right after commit, and the worker's reconciler
-- takes over what the API could not. lifecycle_claimed_until leases a
-- pending key to one reconciler, so replicas split the work without holding
-- row locks (which rotations and revocations wait on) across Temporal calls.
-- Give up rather than queue every reader behind this ALTER while a long
-- transaction holds the table; the migration can simply be run again.
SET LOCAL lock_timeout = '5s';
ALTER TABLE api_keys
    ADD COLUMN lifecycle_seq           bigint NOT NULL DEFAULT 0,
    ADD COLUMN lifecycle_synced_seq    bigint NOT NULL DEFAULT 0,
    ADD COLUMN lifecycle_claimed_until timestamptz,
    ADD CONSTRAINT api_keys_lifecycle_synced_check CHECK (lifecycle_synced_seq <= lifecycle_seq);

-- Usually empty: only keys whose workflow has not heard of their last change.
CREATE INDEX api_keys_lifecycle_pending_idx ON api_keys (date_updated)
    WHERE lifecycle_seq > lifecycle_synced_seq;

-- Keys that may still have something for their workflow to do (a grace
-- period or an expiry not yet stored as expired) start pending, so a key
-- whose workflow an earlier Temporal outage never started is reconciled
-- once. Other keys start synced (0 = 0). date_updated is left alone: it is
-- what the API shows, and nothing the API shows changes here.
UPDATE api_keys SET lifecycle_seq = 1
    WHERE revoked_at IS NULL
      AND (previous_key_expires_at IS NOT NULL OR expires_at IS NOT NULL AND status <> 'expired');

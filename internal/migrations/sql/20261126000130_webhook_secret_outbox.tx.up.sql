-- The signing secret's rotations reach its workflow (WebhookSecret) through
-- the same outbox as API keys' changes: the rotation bumps lifecycle_seq in
-- its own statement, the worker's relay signals the workflow and marks the
-- number it read as synced (see api_keys' migration ...020).
SET LOCAL lock_timeout = '5s';
ALTER TABLE webhook_subscriptions
    ADD COLUMN lifecycle_seq           bigint NOT NULL DEFAULT 0,
    ADD COLUMN lifecycle_synced_seq    bigint NOT NULL DEFAULT 0,
    ADD COLUMN lifecycle_claimed_until timestamptz,
    ADD CONSTRAINT webhook_subscriptions_lifecycle_synced_check CHECK (lifecycle_synced_seq <= lifecycle_seq);

CREATE INDEX webhook_subscriptions_lifecycle_pending_idx ON webhook_subscriptions (date_updated)
    WHERE lifecycle_seq > lifecycle_synced_seq;

-- A grace period left running before this migration still gets its timer.
UPDATE webhook_subscriptions SET lifecycle_seq = 1 WHERE previous_secret_expires_at > now();

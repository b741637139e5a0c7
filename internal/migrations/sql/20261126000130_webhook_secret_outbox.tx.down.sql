DROP INDEX IF EXISTS webhook_subscriptions_lifecycle_pending_idx;
ALTER TABLE webhook_subscriptions
    DROP CONSTRAINT IF EXISTS webhook_subscriptions_lifecycle_synced_check,
    DROP COLUMN IF EXISTS lifecycle_claimed_until,
    DROP COLUMN IF EXISTS lifecycle_synced_seq,
    DROP COLUMN IF EXISTS lifecycle_seq;

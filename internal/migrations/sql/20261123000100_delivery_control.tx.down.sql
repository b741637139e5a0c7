SET LOCAL lock_timeout = '5s';
DROP INDEX IF EXISTS webhook_deliveries_subscription_success_idx;
DROP INDEX IF EXISTS events_workspace_created_idx;
DROP TABLE IF EXISTS webhook_delivery_states;
ALTER TABLE webhook_subscriptions
    DROP COLUMN IF EXISTS disabled_reason,
    DROP COLUMN IF EXISTS disabled_at,
    DROP COLUMN IF EXISTS failing_since,
    DROP COLUMN IF EXISTS failing_first_event_id,
    DROP COLUMN IF EXISTS exhausted_since_success,
    DROP COLUMN IF EXISTS rate_limit_per_second,
    DROP COLUMN IF EXISTS previous_secret_ciphertext,
    DROP COLUMN IF EXISTS previous_secret_expires_at;

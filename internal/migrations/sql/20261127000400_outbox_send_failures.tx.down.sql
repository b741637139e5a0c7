SET LOCAL lock_timeout = '5s';
ALTER TABLE webhook_subscriptions DROP COLUMN IF EXISTS lifecycle_failures;
ALTER TABLE api_keys DROP COLUMN IF EXISTS lifecycle_failures;
ALTER TABLE events DROP COLUMN IF EXISTS dispatch_failures;

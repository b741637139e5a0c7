SET LOCAL lock_timeout = '5s';
ALTER TABLE webhook_subscriptions DROP COLUMN IF EXISTS headers;

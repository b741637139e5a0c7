SET LOCAL lock_timeout = '5s';
ALTER TABLE webhook_subscriptions DROP COLUMN IF EXISTS lifecycle_trace_context;
ALTER TABLE api_keys DROP COLUMN IF EXISTS lifecycle_trace_context;

-- The trace context of the request that made a key's or a subscription's
-- last lifecycle change (a key created with an expiry, rotated or
-- revoked; a signing secret rotated), as a JSON object of the W3C
-- headers, so the outbox relay signals its workflow inside that request's
-- trace, as it starts an event's delivery workflow (events.trace_context).
-- NULL when tracing is off. Nullable with no default: adding it rewrites
-- no row.
SET LOCAL lock_timeout = '5s';
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS lifecycle_trace_context jsonb;
ALTER TABLE webhook_subscriptions ADD COLUMN IF NOT EXISTS lifecycle_trace_context jsonb;

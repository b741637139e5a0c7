-- The trace context of the request that published an event (W3C
-- traceparent, tracestate, as a JSON object of those headers), so the outbox
-- relay starts its delivery workflow in that trace. NULL when tracing is
-- off: the column costs nothing then. Nullable with no default, so adding
-- it rewrites no row.
ALTER TABLE events ADD COLUMN trace_context jsonb;

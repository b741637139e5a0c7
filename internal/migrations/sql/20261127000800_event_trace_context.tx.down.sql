ALTER TABLE events DROP COLUMN IF EXISTS trace_context;

DROP INDEX IF EXISTS events_undispatched_workspace_idx;

DROP INDEX IF EXISTS events_undispatched_workspace_idx;
DROP INDEX IF EXISTS events_undispatched_test_idx;

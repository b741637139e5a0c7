DROP INDEX IF EXISTS webhook_deliveries_event_idx;

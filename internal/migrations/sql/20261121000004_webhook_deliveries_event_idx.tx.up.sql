-- Deleting an event cascades to its delivery records, and retention looks
-- for events no record refers to: both search webhook_deliveries by
-- event_id, which the unique key (led by subscription_id) cannot serve.
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

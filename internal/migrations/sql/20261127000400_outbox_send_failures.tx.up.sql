-- Each outbox row counts its sends Temporal refused (store.SendFailure), so a
-- row that fails every time is held back by a growing backoff instead of
-- being claimed on every sweep. The backoff is kept in the row's lease
-- (dispatch_claimed_until, lifecycle_claimed_until): a row is claimable when
-- its lease has passed, so the claims and their indexes are unchanged.
-- A constant default adds the columns without rewriting the tables.
SET LOCAL lock_timeout = '5s';
ALTER TABLE events ADD COLUMN IF NOT EXISTS dispatch_failures integer NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS lifecycle_failures integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_subscriptions ADD COLUMN IF NOT EXISTS lifecycle_failures integer NOT NULL DEFAULT 0;

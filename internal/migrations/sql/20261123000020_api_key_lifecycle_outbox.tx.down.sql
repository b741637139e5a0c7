DROP INDEX IF EXISTS api_keys_lifecycle_pending_idx;
ALTER TABLE api_keys
    DROP COLUMN IF EXISTS lifecycle_claimed_until,
    DROP COLUMN IF EXISTS lifecycle_synced_seq,
    DROP COLUMN IF EXISTS lifecycle_seq;

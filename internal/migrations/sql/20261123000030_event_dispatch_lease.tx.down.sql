ALTER TABLE events DROP COLUMN IF EXISTS dispatch_claimed_until;

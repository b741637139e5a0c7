-- A sweeper leases the undispatched events it is starting, in one short
-- statement, instead of holding row locks and a transaction open across
-- Temporal calls: replicas still split a backlog, and a sweeper that dies
-- mid-batch leaves its rows to others once the lease ends.
SET LOCAL lock_timeout = '5s';
ALTER TABLE events ADD COLUMN IF NOT EXISTS dispatch_claimed_until timestamptz;

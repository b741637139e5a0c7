SET LOCAL lock_timeout = '5s';
DROP FUNCTION IF EXISTS webhook_send_acquire(uuid, uuid, integer, interval);
DROP TABLE IF EXISTS webhook_send_limits;
DROP TYPE IF EXISTS webhook_send_lease;

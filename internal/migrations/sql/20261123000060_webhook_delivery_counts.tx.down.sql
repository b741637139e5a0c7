SET LOCAL lock_timeout = '5s';
DROP TRIGGER IF EXISTS webhook_delivery_counts_insert ON webhook_deliveries;
DROP TRIGGER IF EXISTS webhook_delivery_counts_delete ON webhook_deliveries;
DROP FUNCTION IF EXISTS webhook_delivery_counts_add();
DROP FUNCTION IF EXISTS webhook_delivery_counts_remove();
DROP TABLE IF EXISTS webhook_delivery_counts;

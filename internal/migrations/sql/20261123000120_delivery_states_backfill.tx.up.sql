-- Delivery states for the deliveries recorded before webhook_delivery_states
-- existed (migration …100), so that recover (which walks the states) finds
-- the deliveries that failed shortly before the deploy, and GET .../events
-- reads one source. From the records: succeeded if any attempt did, else
-- failed (nothing knows of a later attempt), with the highest attempt
-- number and the last record's status code, as recipientsQuery reads
-- them. A delivery still under way at the deploy shows failed until its
-- next attempt's record moves it on (a record never lowers attempts).
-- One pass over the records kept for DELIVERY_RETENTION, once.
INSERT INTO webhook_delivery_states AS ds (event_id, subscription_id, status, attempts, next_attempt_at,
        last_status_code, event_date_created, date_updated)
SELECT d.event_id, d.subscription_id,
       CASE WHEN bool_or(d.success) THEN 'succeeded' ELSE 'failed' END,
       max(d.attempt_number),
       NULL,
       (array_agg(d.status_code ORDER BY d.attempt_number DESC))[1],
       e.date_created,
       now()
FROM webhook_deliveries AS d
JOIN events AS e ON e.id = d.event_id
GROUP BY d.event_id, d.subscription_id, e.date_created
ON CONFLICT (event_id, subscription_id) DO NOTHING;

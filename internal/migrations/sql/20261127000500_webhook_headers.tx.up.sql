-- Custom headers a subscription sends on every delivery attempt: an array
-- of {"name", "value"} for a plain header and {"name", "sealed"} for a
-- sensitive one, whose value is encrypted with WEBHOOK_SECRET_KEY's ring
-- (base64 in JSON) and bound to the subscription and the lower-cased name.
-- An array keeps one row read per attempt; a constant default adds the
-- column without rewriting the table.
SET LOCAL lock_timeout = '5s';
ALTER TABLE webhook_subscriptions
    ADD COLUMN IF NOT EXISTS headers jsonb NOT NULL DEFAULT '[]'
        CHECK (jsonb_typeof(headers) = 'array' AND jsonb_array_length(headers) <= 20);

SET LOCAL lock_timeout = '5s';
-- v1 receivers cannot verify a v1a subscription's deliveries: refuse to
-- drop the scheme while one exists rather than sign with its private key as HMAC.
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM webhook_subscriptions WHERE signature_scheme = 'v1a') THEN
        RAISE EXCEPTION 'v1a webhook subscriptions exist: delete them before rolling back this migration';
    END IF;
END $$;
ALTER TABLE webhook_subscriptions
    DROP COLUMN IF EXISTS previous_public_key,
    DROP COLUMN IF EXISTS public_key,
    DROP COLUMN IF EXISTS signature_scheme;

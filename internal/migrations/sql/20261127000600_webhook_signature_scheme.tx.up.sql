-- A subscription's Standard Webhooks signature scheme: v1 (HMAC-SHA256 with
-- a whsec_ secret) or v1a (ed25519). A v1a subscription's secret_ciphertext
-- (and previous_secret_ciphertext during a rotation's grace period) seals
-- its whsk_ private key, so rotation, the grace period's end and resealing
-- treat both schemes alike. The whpk_ public keys are not secret: kept in
-- the clear, so reading one needs no key ring.
SET LOCAL lock_timeout = '5s';
ALTER TABLE webhook_subscriptions
    ADD COLUMN IF NOT EXISTS signature_scheme text NOT NULL DEFAULT 'v1'
        CHECK (signature_scheme IN ('v1', 'v1a')),
    ADD COLUMN IF NOT EXISTS public_key text
        CHECK ((signature_scheme = 'v1a') = (public_key IS NOT NULL)),
    ADD COLUMN IF NOT EXISTS previous_public_key text;

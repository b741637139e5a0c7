-- A portal session also lives on its minting secret: the hash of the API
-- key secret that minted it must still be the key's current secret, or
-- its previous one within the rotation's grace period. A rotation treats
-- the secret it replaces as possibly leaked, so the links and sessions
-- that secret minted end with it, as its API access does. Sessions minted
-- before this migration record no secret: they end here (a day at most).
SET LOCAL lock_timeout = '5s';
DELETE FROM portal_sessions;
ALTER TABLE portal_sessions ADD COLUMN api_key_secret_hash bytea NOT NULL;

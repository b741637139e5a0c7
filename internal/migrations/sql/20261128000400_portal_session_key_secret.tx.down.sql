SET LOCAL lock_timeout = '5s';
ALTER TABLE portal_sessions DROP COLUMN IF EXISTS api_key_secret_hash;

-- Idempotency-Key on POST requests: one row per (API key, Idempotency-Key),
-- claimed with an in-progress row (response_status NULL) before the handler
-- runs, then completed with the response to replay. Rows live 24 hours:
-- lookups ignore older ones and the retention activity deletes them.
-- No foreign key to api_keys: a claim must not wait on a key's row lock
-- (rotation holds it), and the rows expire within a day anyway.
SET LOCAL lock_timeout = '5s';
CREATE TABLE IF NOT EXISTS idempotency_keys (
	api_key_id        uuid        NOT NULL,
	idempotency_key   text        NOT NULL,
	request_method    text        NOT NULL,
	request_path      text        NOT NULL,
	request_hash      bytea       NOT NULL,
	created_at        timestamptz NOT NULL,
	-- NULL while the first request is still running.
	response_status   integer,
	-- The replayed headers (Content-Type, Location, ...), name to value.
	response_headers  jsonb,
	-- The body as sent, or sealed with the webhook key ring when
	-- response_sealed (a body that holds a secret); NULL when
	-- response_withheld (it held a secret and no key was configured).
	response_body     bytea,
	response_sealed   boolean     NOT NULL DEFAULT false,
	response_withheld boolean     NOT NULL DEFAULT false,
	PRIMARY KEY (api_key_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_created_at_idx ON idempotency_keys (created_at);

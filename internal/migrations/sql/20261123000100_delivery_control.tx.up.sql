-- Delivery control (issue 12): what the customer sees and controls of
-- each subscription's deliveries.
SET LOCAL lock_timeout = '5s';

-- Subscription health and controls. disabled_reason/disabled_at explain an
-- automatic disable ('failing'); a PUT {"enabled": true} clears both.
-- failing_since is the first failed attempt since the last success (NULL
-- while healthy), failing_first_event_id that attempt's event, so "at
-- least two failed events" can be told from one event's retries.
-- exhausted_since_success marks a subscription owed a
-- webhook.delivery.recovered event at its next success.
-- rate_limit_per_second caps deliveries across every worker replica (NULL:
-- unlimited). previous_secret_* is the signing secret replaced by a
-- rotation, which deliveries keep signing with until it expires.
ALTER TABLE webhook_subscriptions
    ADD COLUMN IF NOT EXISTS disabled_reason text CHECK (disabled_reason IN ('failing')),
    ADD COLUMN IF NOT EXISTS disabled_at timestamptz,
    ADD COLUMN IF NOT EXISTS failing_since timestamptz,
    ADD COLUMN IF NOT EXISTS failing_first_event_id uuid,
    ADD COLUMN IF NOT EXISTS exhausted_since_success boolean NOT NULL DEFAULT false,
    ADD COLUMN IF NOT EXISTS rate_limit_per_second integer CHECK (rate_limit_per_second BETWEEN 1 AND 10000),
    ADD COLUMN IF NOT EXISTS previous_secret_ciphertext bytea,
    ADD COLUMN IF NOT EXISTS previous_secret_expires_at timestamptz;

-- One row per (event, recipient) once its first attempt (or skip) has been
-- made: the delivery's status as the API shows it. Written by the attempt
-- activity in the same transaction as the attempt's record, so the two
-- never disagree. No row yet: pending, no attempt made (the event's
-- recipients say who is owed one). event_date_created is copied from the
-- event so recovery's window ("failed deliveries of events created since
-- X") is one index range.
CREATE TABLE IF NOT EXISTS webhook_delivery_states (
    event_id           uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    subscription_id    uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    status             text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts           integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at    timestamptz,
    last_status_code   integer,
    event_date_created timestamptz NOT NULL,
    date_updated       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, subscription_id)
);
CREATE INDEX IF NOT EXISTS webhook_delivery_states_subscription_idx
    ON webhook_delivery_states (subscription_id, status, event_date_created, event_id);

-- The workspace's events, newest first (GET .../events).
CREATE INDEX IF NOT EXISTS events_workspace_created_idx ON events (workspace_id, date_created DESC, id DESC);

-- Delivery records filtered by outcome (GET .../deliveries?status=).
CREATE INDEX IF NOT EXISTS webhook_deliveries_subscription_success_idx
    ON webhook_deliveries (subscription_id, success, date_created DESC, id DESC);

-- Tenancy: workspaces, users and their memberships.
CREATE TABLE workspaces (
    id           uuid PRIMARY KEY,
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
    date_created timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id           uuid PRIMARY KEY,
    email        text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 320),
    date_created timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE workspace_members (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('admin', 'member')),
    date_created timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user_idx ON workspace_members (user_id);

-- API keys. Only SHA-256 hashes of secrets are stored. The previous secret of
-- a rotation lives on beside the current one until previous_key_expires_at.
-- status is the stored view moved by the key's workflow; authentication always
-- re-derives the truth from the timestamps.
CREATE TABLE api_keys (
    id                      uuid PRIMARY KEY,
    workspace_id            uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id                 uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name                    text CHECK (char_length(name) <= 120),
    secure_key              text NOT NULL CHECK (char_length(secure_key) <= 120),
    secret_hash             bytea NOT NULL,
    previous_secret_hash    bytea,
    status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'rotating', 'expired')),
    expires_at              timestamptz,
    previous_key_expires_at timestamptz,
    last_rotated_at         timestamptz,
    date_last_used          timestamptz,
    revoked_at              timestamptz,
    date_created            timestamptz NOT NULL DEFAULT now(),
    date_updated            timestamptz NOT NULL DEFAULT now(),
    CHECK ((previous_secret_hash IS NULL) = (previous_key_expires_at IS NULL))
);
CREATE UNIQUE INDEX api_keys_secret_hash_key ON api_keys (secret_hash);
CREATE UNIQUE INDEX api_keys_previous_secret_hash_key ON api_keys (previous_secret_hash)
    WHERE previous_secret_hash IS NOT NULL;
CREATE INDEX api_keys_workspace_created_idx ON api_keys (workspace_id, date_created DESC, id DESC)
    WHERE revoked_at IS NULL;
CREATE INDEX api_keys_workspace_user_created_idx ON api_keys (workspace_id, user_id, date_created DESC, id DESC)
    WHERE revoked_at IS NULL;

-- Projects. git_repo is the optional connected repository, kept as the
-- object the API returns.
CREATE TABLE projects (
    id                                  uuid PRIMARY KEY,
    workspace_id                        uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    creator_id                          uuid REFERENCES users (id) ON DELETE SET NULL,
    name                                text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
    description                         text NOT NULL DEFAULT '',
    sample                              boolean NOT NULL DEFAULT false,
    source                              text NOT NULL DEFAULT 'api' CHECK (source IN ('web', 'api', 'null')),
    task_type                           text NOT NULL CHECK (task_type IN ('llm-base', 'tabular-classification', 'tabular-regression', 'text-classification')),
    version_count                       integer NOT NULL DEFAULT 0,
    inference_pipeline_count            integer NOT NULL DEFAULT 0,
    goal_count                          integer NOT NULL DEFAULT 0,
    development_goal_count              integer NOT NULL DEFAULT 0,
    monitoring_goal_count               integer NOT NULL DEFAULT 0,
    unread_notification_count           integer NOT NULL DEFAULT 0,
    slack_channel_notifications_enabled boolean NOT NULL DEFAULT false,
    slack_channel_name                  text NOT NULL DEFAULT '',
    slack_channel_id                    text NOT NULL DEFAULT '',
    git_repo                            jsonb,
    date_created                        timestamptz NOT NULL DEFAULT now(),
    date_updated                        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX projects_workspace_name_key ON projects (workspace_id, lower(name));
CREATE INDEX projects_workspace_created_idx ON projects (workspace_id, date_created DESC, id DESC);
CREATE INDEX projects_workspace_task_type_created_idx ON projects (workspace_id, task_type, date_created DESC, id DESC);

-- Webhook subscriptions. The signing secret is stored only encrypted
-- (AES-256-GCM with a key from configuration).
CREATE TABLE webhook_subscriptions (
    id                uuid PRIMARY KEY,
    workspace_id      uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    creator_id        uuid REFERENCES users (id) ON DELETE SET NULL,
    url               text NOT NULL CHECK (char_length(url) <= 2048),
    description       text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
    event_types       text[] NOT NULL CHECK (cardinality(event_types) >= 1),
    enabled           boolean NOT NULL DEFAULT true,
    secret_ciphertext bytea NOT NULL,
    date_created      timestamptz NOT NULL DEFAULT now(),
    date_updated      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_workspace_created_idx ON webhook_subscriptions (workspace_id, date_created DESC, id DESC);
CREATE INDEX webhook_subscriptions_event_types_idx ON webhook_subscriptions USING gin (event_types);

-- Events, with an outbox column: dispatched_at stays NULL until the delivery
-- workflow has been started, so an event accepted while Temporal was down is
-- picked up later instead of being lost.
CREATE TABLE events (
    id            uuid PRIMARY KEY,
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type          text NOT NULL,
    data          jsonb NOT NULL,
    date_created  timestamptz NOT NULL DEFAULT now(),
    dispatched_at timestamptz
);
CREATE INDEX events_undispatched_idx ON events (date_created) WHERE dispatched_at IS NULL;
CREATE INDEX events_date_created_idx ON events (date_created);

-- One row per delivery attempt; the unique key makes a retried activity
-- write its attempt once.
CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    subscription_id  uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id         uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    attempt_number   integer NOT NULL CHECK (attempt_number >= 1),
    success          boolean NOT NULL,
    status_code      integer,
    response_body    text NOT NULL DEFAULT '',
    response_time_ms integer NOT NULL DEFAULT 0,
    error_message    text,
    date_created     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (subscription_id, event_id, attempt_number)
);
CREATE INDEX webhook_deliveries_subscription_created_idx ON webhook_deliveries (subscription_id, date_created DESC, id DESC);
CREATE INDEX webhook_deliveries_date_created_idx ON webhook_deliveries (date_created);

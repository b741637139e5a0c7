-- Workspaces as the SDKs read them (a slug, when they last changed, who
-- made them) and invites: an admin invites an address, whose owner accepts
-- with the invite's token and gets their first API key.
SET LOCAL lock_timeout = '5s';

-- A slug for a workspace that has none: its name in lower-case ASCII words
-- joined by '-', then 12 hex digits of its id, so two workspaces of one
-- name never clash.
CREATE FUNCTION workspace_default_slug(name text, id uuid) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(nullif(trim(both '-' FROM left(regexp_replace(lower(name), '[^a-z0-9]+', '-', 'g'), 40)), ''), 'workspace')
        || '-' || left(replace(id::text, '-', ''), 12)
$$;

ALTER TABLE workspaces
    ADD COLUMN slug text,
    ADD COLUMN date_updated timestamptz,
    ADD COLUMN creator_id uuid REFERENCES users (id) ON DELETE SET NULL;

-- The creator of a workspace made before this column: its first admin.
UPDATE workspaces w SET
    slug = workspace_default_slug(w.name, w.id),
    date_updated = w.date_created,
    creator_id = (SELECT m.user_id FROM workspace_members m
                  WHERE m.workspace_id = w.id AND m.role = 'admin'
                  ORDER BY m.date_created, m.user_id LIMIT 1);

ALTER TABLE workspaces
    ALTER COLUMN slug SET NOT NULL,
    ALTER COLUMN date_updated SET NOT NULL,
    ALTER COLUMN date_updated SET DEFAULT now(),
    ADD CONSTRAINT workspaces_slug_check CHECK (char_length(slug) <= 64 AND slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$');
CREATE UNIQUE INDEX workspaces_slug_key ON workspaces (slug);

-- Every insert that names no slug (the previous release's, operator
-- commands, seeds) gets the default one.
CREATE FUNCTION workspaces_default_slug() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.slug IS NULL THEN
        NEW.slug := workspace_default_slug(NEW.name, NEW.id);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER workspaces_default_slug BEFORE INSERT ON workspaces
    FOR EACH ROW EXECUTE FUNCTION workspaces_default_slug();

-- Invites. Only the SHA-256 hash of the token is stored, as for API keys.
-- An invite is pending until date_accepted is set or expires_at passes;
-- revoking one deletes it.
CREATE TABLE workspace_invites (
    id            uuid PRIMARY KEY,
    workspace_id  uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    creator_id    uuid REFERENCES users (id) ON DELETE SET NULL,
    email         text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 320),
    role          text NOT NULL CHECK (role IN ('admin', 'member')),
    token_hash    bytea NOT NULL,
    date_created  timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    date_accepted timestamptz,
    CHECK (expires_at > date_created)
);
-- One open (not accepted) invite per address and workspace: a new invite
-- for the address replaces it.
CREATE UNIQUE INDEX workspace_invites_open_email_key ON workspace_invites (workspace_id, lower(email))
    WHERE date_accepted IS NULL;
CREATE INDEX workspace_invites_workspace_created_idx ON workspace_invites (workspace_id, date_created DESC, id DESC);

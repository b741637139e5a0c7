package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// admin runs the command as the binary would, with DATABASE_URL set to
// dsn, and returns its stdout.
func admin(t *testing.T, dsn string, args ...string) (string, error) {
	t.Helper()
	t.Setenv("DATABASE_URL", dsn)
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	if err != nil && out.Len() > 0 {
		t.Errorf("admin %v failed but printed %q", args, out.String())
	}
	return out.String(), err
}

type credentials struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	UserID      uuid.UUID `json:"userId"`
	APIKeyID    uuid.UUID `json:"apiKeyId"`
	Secret      string    `json:"secret"`
}

// decodeCredentials checks the output is exactly the four members.
func decodeCredentials(t *testing.T, out string) credentials {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output %q is not JSON: %v", out, err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if want := []string{"apiKeyId", "secret", "userId", "workspaceId"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("output members %v, want %v", keys, want)
	}
	var c credentials
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// authenticates checks the secret opens the key it names, for that user and
// workspace with role, as the API would check it.
func authenticates(t *testing.T, dsn string, c credentials, role models.Role) {
	t.Helper()
	db, err := store.Open(dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !strings.HasPrefix(c.Secret, secret.APIKeyPrefix) {
		t.Errorf("secret %q lacks the %q prefix", c.Secret, secret.APIKeyPrefix)
	}
	hash := secret.HashAPIKey(c.Secret)
	cred, err := store.New(db).CredentialByHash(context.Background(), hash)
	if err != nil {
		t.Fatalf("the printed secret finds no key: %v", err)
	}
	p, ok := cred.Authenticate(hash, time.Now())
	want := models.Principal{KeyID: c.APIKeyID, WorkspaceID: c.WorkspaceID, UserID: c.UserID, Role: role}
	if !ok || p.KeyID != want.KeyID || p.WorkspaceID != want.WorkspaceID || p.UserID != want.UserID || p.Role != want.Role {
		t.Errorf("authenticated %v as %+v, want %+v", ok, p, want)
	}
}

func TestMigrate(t *testing.T) {
	dsn := pgtest.NewEmptyURL(t)
	out, err := admin(t, dsn, "migrate")
	if err != nil {
		t.Fatal(err)
	}
	var first struct{ Applied []string }
	if err := json.Unmarshal([]byte(out), &first); err != nil || len(first.Applied) == 0 || first.Applied[0] != "20261121000001_initial" {
		t.Fatalf("first migrate printed %q (%v)", out, err)
	}
	out, err = admin(t, dsn, "migrate")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(strings.Fields(out), "") != `{"applied":[]}` {
		t.Errorf("second migrate printed %q, want nothing applied", out)
	}
	if _, err := admin(t, dsn, "migrate", "extra"); err == nil {
		t.Error("migrate with an argument succeeded")
	}
}

func TestBootstrap(t *testing.T) {
	dsn := pgtest.NewURL(t)
	out, err := admin(t, dsn, "bootstrap", "--workspace-name", "Acme", "--email", "ops@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	c := decodeCredentials(t, out)
	authenticates(t, dsn, c, models.RoleAdmin)

	// A second bootstrap makes another workspace; the same email is the same user.
	out, err = admin(t, dsn, "bootstrap", "--workspace-name=Beta", "--email=OPS@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	c2 := decodeCredentials(t, out)
	if c2.WorkspaceID == c.WorkspaceID || c2.UserID != c.UserID || c2.Secret == c.Secret {
		t.Errorf("second bootstrap %+v against first %+v", c2, c)
	}
	authenticates(t, dsn, c2, models.RoleAdmin)

	for _, c := range []struct {
		name    string
		args    []string
		mention string
	}{
		{"no flags", []string{"bootstrap"}, "--email, --workspace-name"},
		{"no email", []string{"bootstrap", "--workspace-name", "X"}, "--email"},
		{"blank name", []string{"bootstrap", "--workspace-name", "  ", "--email", "a@b.c"}, "--workspace-name"},
		{"unknown flag", []string{"bootstrap", "--workspace", "X", "--email", "a@b.c"}, "workspace"},
		{"stray argument", []string{"bootstrap", "--workspace-name", "X", "--email", "a@b.c", "now"}, "now"},
	} {
		if _, err := admin(t, dsn, c.args...); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.mention)
		}
	}
}

func TestAddMember(t *testing.T) {
	dsn := pgtest.NewURL(t)
	out, err := admin(t, dsn, "bootstrap", "--workspace-name", "Acme", "--email", "ops@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	ws := decodeCredentials(t, out).WorkspaceID.String()

	out, err = admin(t, dsn, "add-member", "--workspace-id", ws, "--email", "dev@acme.test", "--role", "member")
	if err != nil {
		t.Fatal(err)
	}
	member := decodeCredentials(t, out)
	if member.WorkspaceID.String() != ws {
		t.Errorf("member joined %s, want %s", member.WorkspaceID, ws)
	}
	authenticates(t, dsn, member, models.RoleMember)

	out, err = admin(t, dsn, "add-member", "--workspace-id", ws, "--email", "lead@acme.test", "--role", "admin")
	if err != nil {
		t.Fatal(err)
	}
	authenticates(t, dsn, decodeCredentials(t, out), models.RoleAdmin)

	out, err = admin(t, dsn, "add-member", "--workspace-id", ws, "--email", "intern@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	authenticates(t, dsn, decodeCredentials(t, out), models.RoleMember) // the default role

	for _, c := range []struct {
		name    string
		args    []string
		mention string
	}{
		{"role not admin or member", []string{"--workspace-id", ws, "--email", "x@acme.test", "--role", "owner"}, "--role"},
		{"role in upper case", []string{"--workspace-id", ws, "--email", "x@acme.test", "--role", "ADMIN"}, "--role"},
		{"workspace id not a uuid", []string{"--workspace-id", "acme", "--email", "x@acme.test"}, "--workspace-id"},
		{"no workspace id", []string{"--email", "x@acme.test"}, "--workspace-id"},
		{"no email", []string{"--workspace-id", ws}, "--email"},
		{"no flags", nil, "--email, --workspace-id"},
		{"workspace that does not exist", []string{"--workspace-id", uuid.NewString(), "--email", "x@acme.test"}, "workspace"},
		{"already a member", []string{"--workspace-id", ws, "--email", "DEV@acme.test"}, "already a member"},
	} {
		args := append([]string{"add-member"}, c.args...)
		if _, err := admin(t, dsn, args...); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.mention)
		}
	}
	// None of the refused commands left a user or membership behind.
	db, err := store.Open(dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var users, members int
	if err := db.QueryRowContext(context.Background(), "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM workspace_members)").Scan(&users, &members); err != nil {
		t.Fatal(err)
	}
	if users != 4 || members != 4 {
		t.Errorf("%d users and %d memberships, want 4 and 4", users, members)
	}
}

func TestUsageErrors(t *testing.T) {
	dsn := pgtest.NewURL(t)
	if _, err := admin(t, dsn); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no command: %v", err)
	}
	if _, err := admin(t, dsn, "drop-everything"); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := admin(t, "", "migrate"); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("no DATABASE_URL: %v", err)
	}
}

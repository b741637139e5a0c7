package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// After a rotation (WEBHOOK_SECRET_KEY=NEW,OLD) the command moves every
// secret sealed under OLD to NEW, in batches, without changing the secret;
// a second run changes nothing; a secret no key opens fails the run, named,
// while the others are still resealed.
func TestResealWebhookSecrets(t *testing.T) {
	f := newResealSetup(t)
	dsn, db, st, ctx, ws, oldKey, newKey, oldBox, newBox := f.dsn, f.db, f.st, f.ctx, f.ws, f.oldKey, f.newKey, f.oldBox, f.newBox

	plain := map[uuid.UUID]string{}
	create := func(box *secret.Box) uuid.UUID {
		t.Helper()
		whsec, _ := secret.NewWebhookSecret()
		id := uuid.New()
		sealed, _ := box.Seal([]byte(whsec), id[:])
		if _, err := st.Webhooks().Create(ctx, id, models.NewWebhook{
			WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, URL: "https://example.com/hook",
			EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		}, sealed, 0); err != nil {
			t.Fatal(err)
		}
		plain[id] = whsec
		return id
	}
	for range 5 {
		create(oldBox)
	}
	create(newBox) // made by an API already on the new key

	t.Setenv("WEBHOOK_SECRET_KEY", enc(newKey)+","+enc(oldKey))
	out, err := admin(t, dsn, "reseal-webhook-secrets", "--batch-size", "2")
	if err != nil {
		t.Fatal(err)
	}
	if got := report(t, out); got != (resealReport{Checked: 6, Resealed: 5}) {
		t.Fatalf("first run reported %+v, want 6 checked, 5 resealed", got)
	}
	for id, want := range plain {
		got, err := newBox.Open(sealedSecret(t, db, id), id[:])
		if err != nil || string(got) != want {
			t.Fatalf("subscription %s: the new key alone opens %q (%v), want its unchanged secret", id, got, err)
		}
	}

	out, err = admin(t, dsn, "reseal-webhook-secrets")
	if err != nil {
		t.Fatal(err)
	}
	if got := report(t, out); got != (resealReport{Checked: 6, Resealed: 0}) {
		t.Fatalf("second run reported %+v, want nothing resealed", got)
	}

	lost, _ := secret.NewBox(randomKey())
	lostID := create(lost)
	create(oldBox)
	_, err = admin(t, dsn, "reseal-webhook-secrets", "--batch-size", "3")
	if err == nil || !strings.Contains(err.Error(), lostID.String()) || !strings.Contains(err.Error(), "1 of 8") {
		t.Fatalf("with a secret no key opens: err %v, want it named", err)
	}
	if strings.Contains(err.Error(), enc(newKey)) || strings.Contains(err.Error(), enc(oldKey)) {
		t.Fatalf("the error shows a key: %v", err)
	}
	for id, want := range plain {
		if id == lostID {
			continue
		}
		if got, err := newBox.Open(sealedSecret(t, db, id), id[:]); err != nil || string(got) != want {
			t.Fatalf("subscription %s was not resealed beside the undecryptable one: %v", id, err)
		}
	}

	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"reseal-webhook-secrets"}, "WEBHOOK_SECRET_KEY is not set"},
		{enc(newKey), []string{"reseal-webhook-secrets", "--batch-size", "0"}, "--batch-size"},
		{enc(newKey), []string{"reseal-webhook-secrets", "now"}, "now"},
	} {
		t.Setenv("WEBHOOK_SECRET_KEY", c.env)
		if _, err := admin(t, dsn, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v (key set: %t): err %v, want one mentioning %q", c.args, c.env != "", err, c.want)
		}
	}
}

// resealSetup is a workspace on a fresh database and a key ring's rotation
// from oldKey to newKey: a box for each, and the ring of both (new first).
type resealSetup struct {
	dsn            string
	db             *bun.DB
	st             *store.Store
	ctx            context.Context
	ws             store.Credentials
	oldKey, newKey []byte
	oldBox, newBox *secret.Box
	ring           *secret.Box
}

func newResealSetup(t *testing.T) resealSetup {
	t.Helper()
	f := resealSetup{dsn: pgtest.NewURL(t), ctx: context.Background(), oldKey: randomKey(), newKey: randomKey()}
	db, err := store.Open(f.dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db, f.st = db, store.New(db)
	if f.ws, err = f.st.Bootstrap(f.ctx, "Acme", "ops@acme.test"); err != nil {
		t.Fatal(err)
	}
	f.oldBox, _ = secret.NewBox(f.oldKey)
	f.newBox, _ = secret.NewBox(f.newKey)
	f.ring, _ = secret.NewBox(f.newKey, f.oldKey)
	return f
}

func randomKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

func enc(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

func report(t *testing.T, out string) resealReport {
	t.Helper()
	var r resealReport
	dec := json.NewDecoder(bytes.NewReader([]byte(out)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	return r
}

func sealedSecret(t *testing.T, db *bun.DB, id uuid.UUID) []byte {
	t.Helper()
	var b []byte
	if err := db.QueryRowContext(context.Background(), "SELECT secret_ciphertext FROM webhook_subscriptions WHERE id = ?", id).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

package main

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// A signing secret in its rotation's grace period still signs deliveries,
// so resealing moves it to the new key too; an expired one that no key
// opens any more is not a reason to keep the old key.
func TestResealCoversPreviousSecrets(t *testing.T) {
	f := newResealSetup(t)
	db, st, ctx, ws, oldBox, newBox, ring := f.db, f.st, f.ctx, f.ws, f.oldBox, f.newBox, f.ring

	// subscribe creates a subscription sealed under box and rotates it
	// with grace; it returns the id and the replaced (previous) secret.
	subscribe := func(box *secret.Box, grace time.Duration) (uuid.UUID, string) {
		t.Helper()
		id := uuid.New()
		first, _ := secret.NewWebhookSecret()
		second, _ := secret.NewWebhookSecret()
		s1, _ := box.Seal([]byte(first), id[:])
		s2, _ := oldBox.Seal([]byte(second), id[:])
		if _, err := st.Webhooks().Create(ctx, id, models.NewWebhook{
			WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, URL: "https://example.com/hook",
			EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		}, s1, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Webhooks().RotateSecret(ctx, ws.WorkspaceID, id, s2, nil, grace); err != nil {
			t.Fatal(err)
		}
		return id, first
	}
	inGrace, previous := subscribe(oldBox, time.Hour)
	lost, _ := secret.NewBox(randomKey())
	expired, _ := subscribe(lost, time.Millisecond) // its previous secret opens with no key
	time.Sleep(20 * time.Millisecond)

	if _, err := resealWebhookSecrets(ctx, db, ring, 10); err != nil {
		t.Fatalf("reseal: %v (an expired previous secret must not fail it)", err)
	}
	tg, err := st.Webhooks().Target(ctx, inGrace)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := newBox.Open(tg.PreviousSecretCiphertext, inGrace[:]); err != nil || string(got) != previous {
		t.Fatalf("the previous secret in its grace period does not open with the new key alone (%v)", err)
	}
	if _, err := newBox.Open(tg.SecretCiphertext, inGrace[:]); err != nil {
		t.Fatalf("the current secret was not resealed: %v", err)
	}
	if tg, _ := st.Webhooks().Target(ctx, expired); tg.PreviousSecretCiphertext == nil {
		t.Fatal("the expired previous secret was erased; reseal should leave it to the worker")
	}
}

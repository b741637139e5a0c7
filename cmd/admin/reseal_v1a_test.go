package main

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// A v1a subscription's private keys, current and in a rotation's grace
// period, are sealed where v1 secrets are, so resealing moves them to the
// new key too and they still sign as the public keys say.
func TestResealCoversV1aPrivateKeys(t *testing.T) {
	f := newResealSetup(t)
	db, st, ctx, ws, oldBox, newBox, ring := f.db, f.st, f.ctx, f.ws, f.oldBox, f.newBox, f.ring

	id := uuid.New()
	sk1, pk1, _ := secret.NewWebhookKeyPair()
	sk2, pk2, _ := secret.NewWebhookKeyPair()
	s1, _ := oldBox.Seal([]byte(sk1), id[:])
	s2, _ := oldBox.Seal([]byte(sk2), id[:])
	if _, err := st.Webhooks().Create(ctx, id, models.NewWebhook{
		WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		SignatureScheme: models.SignatureV1a, PublicKey: &pk1,
	}, s1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Webhooks().RotateSecret(ctx, ws.WorkspaceID, id, s2, &pk2, time.Hour); err != nil {
		t.Fatal(err)
	}
	rep, err := resealWebhookSecrets(ctx, db, ring, 10)
	if err != nil || rep.Resealed != 1 {
		t.Fatalf("reseal: %+v, %v", rep, err)
	}
	tg, err := st.Webhooks().Target(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		sealed []byte
		whpk   string
	}{"current": {tg.SecretCiphertext, pk2}, "previous": {tg.PreviousSecretCiphertext, pk1}} {
		plain, err := newBox.Open(c.sealed, id[:])
		if err != nil {
			t.Fatalf("the %s private key does not open with the new key alone: %v", name, err)
		}
		priv, err := secret.WebhookPrivateKey(string(plain))
		if err != nil || secret.WebhookPublicKey(priv) != c.whpk {
			t.Fatalf("the %s private key is not its public key's pair (%v)", name, err)
		}
	}
}

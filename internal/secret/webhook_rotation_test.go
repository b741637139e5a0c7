package secret_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openlayer-ai/workspace-service/internal/secret"
)

// During a rotation's grace period the header carries one signature per
// secret, and the reference library accepts it with either secret (and
// with no other).
func TestSignWebhookWithBothSecrets(t *testing.T) {
	oldSecret, _ := secret.NewWebhookSecret()
	newSecret, _ := secret.NewWebhookSecret()
	other, _ := secret.NewWebhookSecret()
	oldKey, _ := secret.WebhookSigningKey(oldSecret)
	newKey, _ := secret.WebhookSigningKey(newSecret)
	oldK, _ := secret.ParseWebhookKey(oldSecret)
	newK, _ := secret.ParseWebhookKey(newSecret)
	id, ts, body := uuid.NewString(), time.Now(), []byte(`{"type":"webhook.test","data":{}}`)

	header := secret.SignWebhookWith([]secret.WebhookKey{newK, oldK}, id, ts, body)
	parts := strings.Split(header, " ")
	if len(parts) != 2 || parts[0] != secret.SignWebhook(newKey, id, ts, body) || parts[1] != secret.SignWebhook(oldKey, id, ts, body) {
		t.Fatalf("header %q, want the new secret's signature, a space, the old one's", header)
	}
	if one := secret.SignWebhookWith([]secret.WebhookKey{newK}, id, ts, body); one != parts[0] {
		t.Fatalf("one key: %q, want %q", one, parts[0])
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", header)
	for name, s := range map[string]string{"new": newSecret, "old": oldSecret} {
		wh, _ := standardwebhooks.NewWebhook(s)
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("verifying with the %s secret: %v", name, err)
		}
	}
	wh, _ := standardwebhooks.NewWebhook(other)
	if err := wh.Verify(body, h); err == nil {
		t.Error("an unrelated secret verifies the request")
	}
}

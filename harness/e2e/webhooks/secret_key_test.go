package webhooks_test

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// A worker whose WEBHOOK_SECRET_KEY cannot open a subscription's secret
// (a replica left behind in a rotation) holds the attempt back, retrying
// and counting it, instead of dropping the delivery; a worker whose ring
// holds the key then makes it, as attempt 1, with one record.
func TestUndecryptableSecretWaitsForAWorkerWithTheKey(t *testing.T) {
	env := testenv.Start(t) // the API seals under key A
	keyA := env.Config.WebhookSecretKeys[0]
	keyB := make([]byte, 32)
	_, _ = rand.Read(keyB)
	env.StopWorker()
	wrong := env.StartWorker(t, func(c *config.Config) { c.WebhookSecretKeys = [][]byte{keyB} })

	rc := newReceiver(t, http.StatusOK)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}})
	acc := publish(t, env, "test.created", map[string]any{"testId": "k1"})

	deadline := time.Now().Add(20 * time.Second)
	for undecryptable(t, wrong.Addr) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("webhook_secret_undecryptable_total did not rise on the worker without the key")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := rc.count(); n != 0 {
		t.Fatalf("the worker without the key sent %d requests", n)
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	env.DoJSON(t, http.MethodGet, wsPath(env, "/webhooks/"+hook.ID.String()+"/deliveries"), env.AdminKey, nil, http.StatusOK, &page)
	if len(page.Items) != 0 {
		t.Fatalf("attempts that were not made have records: %s", page.Items)
	}
	wrong.Stop()

	// The rotated ring: a new current key, the old one still opening.
	env.StartWorker(t, func(c *config.Config) { c.WebhookSecretKeys = [][]byte{keyB, keyA} })
	got := rc.wait(t, 1, 45*time.Second)
	if got[0].id != acc.ID.String() || got[0].verifyErr != nil {
		t.Fatalf("request for %q (verify %v), want event %s signed with the subscription's secret", got[0].id, got[0].verifyErr, acc.ID)
	}
	raw := records(t, env, hook, 1)
	var rec models.WebhookDelivery
	_ = json.Unmarshal(raw[0], &rec)
	if len(raw) != 1 || rec.AttemptNumber != 1 || !rec.Success || rec.EventID != acc.ID {
		t.Fatalf("%d records, the first %+v; want one successful attempt 1", len(raw), rec)
	}
	time.Sleep(time.Second)
	if rc.count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.count())
	}
}

var undecryptableLine = regexp.MustCompile(`(?m)^webhook_secret_undecryptable_total (\S+)$`)

// undecryptable reads webhook_secret_undecryptable_total from a worker.
func undecryptable(t *testing.T, addr string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := undecryptableLine.FindSubmatch(b)
	if m == nil {
		t.Fatalf("worker metrics lack webhook_secret_undecryptable_total")
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

package webhooks_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A signing secret's grace period, recorded as the golden history
// webhook_secret.json of testenv.GoldenRelease. A rotation with a grace period starts the
// workflow with its signal; it reads the expiry and waits on the "end of
// grace period" timer (the start's own signal, taken before that first
// read, wakes nothing). A second rotation
// during the wait signals it: the timer is cancelled, the workflow re-reads
// the new, earlier expiry and waits again; at that timer's end it erases
// the previous secret, finds no grace period left and ends idle. The
// history holds ids and times, never a secret.
func TestWebhookSecretGoldenHistory(t *testing.T) {
	env := testenv.Start(t)
	rc := newReceiver(t, http.StatusOK)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}})
	first := rotateSecret(t, env, hook.ID, map[string]any{"gracePeriodSeconds": 30})
	id := workflows.WebhookSecretWorkflowID(hook.ID)
	eventually(t, 30*time.Second, "the outbox relay starts the workflow", func() bool {
		_, err := env.Temporal.DescribeWorkflowExecution(context.Background(), id, "")
		return err == nil
	})
	// Rotate again once the workflow waits on the first expiry's timer.
	eventually(t, 30*time.Second, "the workflow waits on its timer", func() bool {
		h := env.History(t, id)
		return countEvents(h, enumspb.EVENT_TYPE_TIMER_STARTED)-countEvents(h, enumspb.EVENT_TYPE_TIMER_CANCELED) == 1
	})
	second := rotateSecret(t, env, hook.ID, map[string]any{"gracePeriodSeconds": 2})
	if second.PreviousSecretExpiresAt == nil || !second.PreviousSecretExpiresAt.Before(*first.PreviousSecretExpiresAt) {
		t.Fatalf("second rotation's expiry %v, want before the first's %v", second.PreviousSecretExpiresAt, first.PreviousSecretExpiresAt)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res workflows.WebhookSecretResult
	if err := env.Temporal.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != workflows.WebhookSecretOutcomeIdle || time.Now().Before(*second.PreviousSecretExpiresAt) {
		t.Fatalf("workflow ended %q before the expiry %v", res.Outcome, second.PreviousSecretExpiresAt)
	}
	if tg, err := env.Store.Webhooks().Target(ctx, hook.ID); err != nil || tg.PreviousSecretCiphertext != nil {
		t.Fatalf("after the grace period the previous secret is still stored (%v)", err)
	}
	h := env.History(t, id)
	for what, want := range map[enumspb.EventType]int{
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: 2, // a rotation's each
		enumspb.EVENT_TYPE_TIMER_STARTED:               2,
		enumspb.EVENT_TYPE_TIMER_CANCELED:              1, // by the second rotation
		enumspb.EVENT_TYPE_TIMER_FIRED:                 1, // the grace period's end
		enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:     3,
	} {
		if got := countEvents(h, what); got != want {
			t.Fatalf("%d %v events, want %d", got, what, want)
		}
	}
	testenv.RecordGolden(t, h, "webhook_secret.json",
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.WebhookSecret) })
	requireNoSecret(t, hook.Secret, h)
	requireNoSecret(t, first.Secret, h)
	requireNoSecret(t, second.Secret, h)
}

func countEvents(h *historypb.History, typ enumspb.EventType) int {
	n := 0
	for _, ev := range h.Events {
		if ev.EventType == typ {
			n++
		}
	}
	return n
}

// requireNoSecret: neither the secret nor its base64 body (after whsec_)
// is in the histories, as protojson shows them or decoded.
func requireNoSecret(t *testing.T, secret string, hs ...*historypb.History) {
	t.Helper()
	body := secret[strings.IndexByte(secret, '_')+1:]
	if !strings.HasPrefix(secret, "whsec_") || len(body) < 16 {
		t.Fatalf("%q does not look like a signing secret: the search would prove nothing", secret)
	}
	for i, h := range hs {
		b, err := protojson.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{string(b), payloadText(h)} {
			if strings.Contains(text, body) {
				t.Fatalf("history %d holds a signing secret", i)
			}
		}
	}
}

package activities_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/deliverytest"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// fixture is the shared delivery fixture (harness/deliverytest) with a
// way to make one attempt.
type fixture struct{ *deliverytest.Fixture }

func newFixture(t *testing.T, allowPrivate bool) *fixture {
	return &fixture{deliverytest.New(t, allowPrivate)}
}

// newReceiver is a loopback receiver answering with handle.
func newReceiver(t *testing.T, handle func(w http.ResponseWriter, n int)) *deliverytest.Receiver {
	return deliverytest.NewReceiver(t, handle)
}

func (f *fixture) attempt(t *testing.T, ev models.Event, sub models.WebhookSubscription, n int) *activities.AttemptResult {
	t.Helper()
	res, err := f.Acts.AttemptDelivery(f.Ctx, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: n})
	if err != nil {
		t.Fatalf("attempt %d: %v", n, err)
	}
	return res
}

func TestAttemptSignsAndRecords(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusNoContent) })
	sub, whsec := f.Subscribe(t, rc.URL+"/hook")
	ev := f.Publish(t, `{"testId":"abc","html":"<b>&</b>"}`)

	res := f.attempt(t, ev, sub, 1)
	if res.Outcome != activities.AttemptDelivered || res.StatusCode != 204 {
		t.Fatalf("result %+v", res)
	}
	got := rc.Requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	h := got[0].Header
	if h.Get("Content-Type") != "application/json" || !strings.Contains(h.Get("User-Agent"), "workspace-service") {
		t.Errorf("headers %v", h)
	}
	if h.Get("webhook-id") != ev.ID.String() {
		t.Errorf("webhook-id %q, want the event id %s", h.Get("webhook-id"), ev.ID)
	}
	wh, _ := standardwebhooks.NewWebhook(whsec)
	if err := wh.Verify(got[0].Body, h); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(got[0].Body, &body); err != nil || len(body) != 3 {
		t.Fatalf("body %s: want exactly type, timestamp, data", got[0].Body)
	}
	var ts time.Time
	_ = json.Unmarshal(body["timestamp"], &ts)
	if string(body["type"]) != `"test.created"` || !ts.Equal(ev.DateCreated) || !strings.Contains(string(body["data"]), `"<b>&</b>"`) {
		t.Fatalf("body %s", got[0].Body)
	}

	rec, err := f.Store.Deliveries().Find(f.Ctx, sub.ID, ev.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Success || rec.StatusCode == nil || *rec.StatusCode != 204 || rec.ErrorMessage != nil || rec.ResponseTimeMs < 0 {
		t.Fatalf("record %+v", rec)
	}
}

// A rerun of the same attempt (the worker died after recording) sends
// nothing and returns what was recorded.
func TestAttemptRerunIsIdempotent(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, n int) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	first := f.attempt(t, ev, sub, 1)
	again := f.attempt(t, ev, sub, 1)
	if first.Outcome != activities.AttemptFailed || *again != *first {
		t.Fatalf("first %+v, rerun %+v", first, again)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	page, _ := f.Store.Deliveries().List(f.Ctx, f.Workspace.WorkspaceID, sub.ID, models.PageRequest{Page: 1, PerPage: 10})
	if page.Meta.TotalItems != 1 {
		t.Fatalf("%d records, want 1", page.Meta.TotalItems)
	}
}

func TestAttemptOutcomes(t *testing.T) {
	f := newFixture(t, true)
	redirected := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	cases := []struct {
		name        string
		handle      func(w http.ResponseWriter, n int)
		outcome     activities.AttemptOutcome
		status      int
		body        string
		errContains string
	}{
		{"410 stops", func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusGone) }, activities.AttemptGone, 410, "", "410"},
		{"500 fails", func(w http.ResponseWriter, _ int) {
			w.WriteHeader(500)
			_, _ = w.Write([]byte("boom"))
		}, activities.AttemptFailed, 500, "boom", "HTTP 500"},
		{"redirect is not followed", func(w http.ResponseWriter, _ int) {
			w.Header().Set("Location", redirected.URL)
			w.WriteHeader(http.StatusFound)
		}, activities.AttemptFailed, 302, "", "redirects are not followed"},
		{"body kept to 1 KiB, made storable", func(w http.ResponseWriter, _ int) {
			_, _ = w.Write([]byte("\x00ok\xff" + strings.Repeat("é", 2000)))
		}, activities.AttemptDelivered, 200, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := newReceiver(t, c.handle)
			sub, _ := f.Subscribe(t, rc.URL)
			ev := f.Publish(t, `{}`)
			res := f.attempt(t, ev, sub, 1)
			if res.Outcome != c.outcome || res.StatusCode != c.status {
				t.Fatalf("result %+v, want %s %d", res, c.outcome, c.status)
			}
			rec, err := f.Store.Deliveries().Find(f.Ctx, sub.ID, ev.ID, 1)
			if err != nil {
				t.Fatal(err)
			}
			if c.body != "" && rec.ResponseBody != c.body {
				t.Errorf("response body %q, want %q", rec.ResponseBody, c.body)
			}
			if len(rec.ResponseBody) > 1024+3 || strings.Contains(rec.ResponseBody, "\x00") {
				t.Errorf("response body of %d bytes kept: %.40q", len(rec.ResponseBody), rec.ResponseBody)
			}
			if c.errContains == "" && rec.ErrorMessage != nil {
				t.Errorf("error message %q on success", *rec.ErrorMessage)
			}
			if c.errContains != "" && (rec.ErrorMessage == nil || !strings.Contains(*rec.ErrorMessage, c.errContains)) {
				t.Errorf("error message %v, want it to contain %q", rec.ErrorMessage, c.errContains)
			}
		})
	}
	if n := len(redirected.Requests()); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}

func TestAttemptConnectionRefused(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) {})
	url := rc.URL
	rc.Close() // nothing listens there any more
	sub, _ := f.Subscribe(t, url)
	ev := f.Publish(t, `{}`)
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptFailed || res.StatusCode != 0 {
		t.Fatalf("result %+v", res)
	}
	rec, _ := f.Store.Deliveries().Find(f.Ctx, sub.ID, ev.ID, 1)
	if rec.StatusCode != nil || rec.ErrorMessage == nil || !strings.Contains(*rec.ErrorMessage, "refused") || strings.Contains(*rec.ErrorMessage, url) {
		t.Fatalf("record %+v (error %v)", rec, *rec.ErrorMessage)
	}
}

// Through the real client: with the flag off, 127.0.0.1 is refused at dial
// time and the receiver never hears of it.
func TestAttemptRefusesLoopbackByDefault(t *testing.T) {
	f := newFixture(t, false)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptFailed {
		t.Fatalf("result %+v, want failed", res)
	}
	if n := len(rc.Requests()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
	rec, _ := f.Store.Deliveries().Find(f.Ctx, sub.ID, ev.ID, 1)
	if rec.StatusCode != nil || rec.ErrorMessage == nil || !strings.Contains(*rec.ErrorMessage, "not allowed") {
		t.Fatalf("record %+v", rec)
	}
	// A name resolving to loopback is refused the same way.
	sub2, _ := f.Subscribe(t, strings.Replace(rc.URL, "127.0.0.1", "localhost", 1))
	if res := f.attempt(t, ev, sub2, 1); res.Outcome != activities.AttemptFailed || len(rc.Requests()) != 0 {
		t.Fatalf("localhost: result %+v, %d requests", res, len(rc.Requests()))
	}
}

func TestAttemptSkipsDisabledAndDeleted(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	disabled, _ := f.Subscribe(t, rc.URL)
	if _, err := f.Store.Webhooks().Update(f.Ctx, f.Workspace.WorkspaceID, disabled.ID, models.WebhookUpdate{Enabled: new(false)}); err != nil {
		t.Fatal(err)
	}
	deleted, _ := f.Subscribe(t, rc.URL)
	if err := f.Store.Webhooks().Delete(f.Ctx, f.Workspace.WorkspaceID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	ev := f.Publish(t, `{}`)
	for _, sub := range []models.WebhookSubscription{disabled, deleted} {
		if res := f.attempt(t, ev, sub, 2); res.Outcome != activities.AttemptSkipped {
			t.Errorf("result %+v, want skipped", res)
		}
	}
	if n := len(rc.Requests()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
	if _, err := f.Store.Deliveries().Find(f.Ctx, disabled.ID, ev.ID, 2); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a skipped attempt was recorded: %v", err)
	}
}

func TestAttemptWithoutKeyWaits(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	f.Acts.WebhookSecrets = nil
	_, err := f.Acts.AttemptDelivery(f.Ctx, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	if !errors.Is(err, secret.ErrNoKey) || len(rc.Requests()) != 0 {
		t.Fatalf("err %v with %d requests; want ErrNoKey and none", err, len(rc.Requests()))
	}
}

// A secret no key of the worker's ring opens (a replica configured with
// another WEBHOOK_SECRET_KEY), or one that opens to garbage, holds the
// attempt back with a retryable error: nothing is sent or recorded, the
// failure is logged at Error with the ids and counted.
func TestAttemptWithUndecryptableSecretRetries(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	sealedElsewhere, _ := f.Subscribe(t, rc.URL)
	malformed, _ := f.Subscribe(t, rc.URL)
	bad, _ := f.Box.Seal([]byte("not a whsec_ secret"), malformed.ID[:])
	if _, err := f.Store.DB().NewUpdate().Table("webhook_subscriptions").Set("secret_ciphertext = ?", bad).Where("id = ?", malformed.ID).Exec(f.Ctx); err != nil {
		t.Fatal(err)
	}
	ev := f.Publish(t, `{}`)
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	f.Acts.Metrics = activities.NewMetrics(reg)
	f.Acts.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	otherKey := make([]byte, 32)
	_, _ = rand.Read(otherKey)
	other, _ := secret.NewBox(otherKey)

	for i, c := range []struct {
		name string
		box  *secret.Box
		sub  models.WebhookSubscription
	}{
		{"another key", other, sealedElsewhere},
		{"malformed", f.Box, malformed},
	} {
		f.Acts.WebhookSecrets = c.box
		logs.Reset()
		_, err := f.Acts.AttemptDelivery(f.Ctx, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: c.sub.ID, AttemptNumber: 1})
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.NonRetryable() || appErr.Type() != activities.ErrUndecryptableSecret {
			t.Fatalf("%s: err %v; want a retryable %s application error", c.name, err, activities.ErrUndecryptableSecret)
		}
		if _, err := f.Store.Deliveries().Find(f.Ctx, c.sub.ID, ev.ID, 1); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("%s: an attempt that was not made has a record (%v)", c.name, err)
		}
		if got := counterValue(t, reg, "webhook_secret_undecryptable_total"); got != float64(i+1) {
			t.Errorf("%s: webhook_secret_undecryptable_total %v, want %d", c.name, got, i+1)
		}
		line := logs.String()
		if !strings.Contains(line, `"level":"ERROR"`) || !strings.Contains(line, c.sub.ID.String()) || !strings.Contains(line, ev.ID.String()) {
			t.Errorf("%s: log %s; want an error naming the subscription and the event", c.name, line)
		}
	}
	if n := len(rc.Requests()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}

	// A worker whose ring holds the key after all (prepended with a newer
	// one) makes the attempt.
	f.Acts.WebhookSecrets, _ = secret.NewBox(otherKey, f.Key)
	if res := f.attempt(t, ev, sealedElsewhere, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("with the key in the ring: result %+v", res)
	}
}

// counterValue reads an unlabelled counter from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s", name)
	return 0
}

// A local first attempt that starts with less than a whole request's time
// before its deadline (it waited for a worker slot) gives up before
// sending, so the regular activity makes it; with the time, it sends.
func TestLocalAttemptLateGivesUpBeforeSending(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	in := &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1}

	var suite testsuite.WorkflowTestSuite
	late := suite.NewTestActivityEnvironment()
	late.RegisterActivity(f.Acts)
	late.SetTestTimeout(3 * time.Second) // the local activity's schedule-to-close
	_, err := late.ExecuteLocalActivity(f.Acts.AttemptDelivery, in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrLocalAttemptLate || appErr.NonRetryable() {
		t.Fatalf("err %v, want a retryable %s", err, activities.ErrLocalAttemptLate)
	}
	if n := len(rc.Requests()); n != 0 {
		t.Fatalf("receiver got %d requests from a late attempt, want 0", n)
	}

	timely := suite.NewTestActivityEnvironment()
	timely.RegisterActivity(f.Acts)
	timely.SetTestTimeout(time.Minute)
	val, err := timely.ExecuteLocalActivity(f.Acts.AttemptDelivery, in)
	var res activities.AttemptResult
	if err != nil || val.Get(&res) != nil || res.Outcome != activities.AttemptDelivered {
		t.Fatalf("timely local attempt: %+v, %v", res, err)
	}
	if n := len(rc.Requests()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
}

package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/grpc"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// fakeTemporal records the calls redelivery and recovery make. Any other
// call panics (the embedded nil interface).
type fakeTemporal struct {
	client.Client

	mu       sync.Mutex
	err      error // every call fails with it when set
	signals  []fakeSignal
	starts   []client.StartWorkflowOptions
	inputs   []*workflows.RecoverInput
	running  bool // a recovery runs: starts fail as the server's would
	progress *workflows.RecoverProgress
	raised   []string // workflow ids a redelivery raised first
}

// WorkflowService serves the priority raise a redelivery makes first.
func (f *fakeTemporal) WorkflowService() workflowservice.WorkflowServiceClient {
	return fakeService{f: f}
}

type fakeService struct {
	workflowservice.WorkflowServiceClient
	f *fakeTemporal
}

func (s fakeService) UpdateWorkflowExecutionOptions(_ context.Context, req *workflowservice.UpdateWorkflowExecutionOptionsRequest, _ ...grpc.CallOption) (*workflowservice.UpdateWorkflowExecutionOptionsResponse, error) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if s.f.err != nil {
		return nil, s.f.err
	}
	s.f.raised = append(s.f.raised, req.GetWorkflowExecution().GetWorkflowId())
	return &workflowservice.UpdateWorkflowExecutionOptionsResponse{}, nil
}

type fakeSignal struct {
	workflowID string
	name       string
	arg        workflows.Redelivery
	opts       client.StartWorkflowOptions
}

func (f *fakeTemporal) setErr(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *fakeTemporal) SignalWithStartWorkflow(_ context.Context, workflowID, signalName string, signalArg any,
	opts client.StartWorkflowOptions, _ any, _ ...any,
) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.signals = append(f.signals, fakeSignal{workflowID, signalName, signalArg.(workflows.Redelivery), opts})
	return fakeRun{"run-1"}, nil
}

func (f *fakeTemporal) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.err != nil:
		return nil, f.err
	case f.running:
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "run-now")
	}
	f.starts = append(f.starts, opts)
	f.inputs = append(f.inputs, args[0].(*workflows.RecoverInput))
	return fakeRun{"recovery-1"}, nil
}

func (f *fakeTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{FirstRunId: "recovery-first"},
	}, nil
}

func (f *fakeTemporal) QueryWorkflow(_ context.Context, workflowID, _, queryType string, _ ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.err != nil:
		return nil, f.err
	case f.progress == nil || queryType != workflows.RecoverProgressQuery || workflowID != workflows.RecoverWorkflowID(f.progress.SubscriptionID):
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	payloads, err := converter.GetDefaultDataConverter().ToPayloads(f.progress)
	if err != nil {
		return nil, err
	}
	return fakeValue{payloads.Payloads[0]}, nil
}

type fakeRun struct{ runID string }

func (r fakeRun) GetID() string                                                           { return "" }
func (r fakeRun) GetFirstExecutionRunID() string                                          { return r.runID }
func (r fakeRun) GetRunID() string                                                        { return r.runID }
func (r fakeRun) Get(context.Context, any) error                                          { return nil }
func (r fakeRun) GetWithOptions(context.Context, any, client.WorkflowRunGetOptions) error { return nil }

type fakeValue struct{ p *commonpb.Payload }

func (v fakeValue) HasValue() bool { return true }
func (v fakeValue) Get(ptr any) error {
	return converter.GetDefaultDataConverter().FromPayload(v.p, ptr)
}

func withTemporal(f *fakeTemporal) func(*api.Deps) {
	return func(d *api.Deps) { d.Temporal = f }
}

// recoveryFixture: a subscription and a dispatched event to it, an event
// not yet dispatched, a second subscription created after both events
// (no recipient of them), and another workspace's subscription.
type recoveryFixture struct {
	h                     *harness
	tc                    *fakeTemporal
	hook, late            models.WebhookCreated
	dispatched, undisp    uuid.UUID
	otherHook, otherEvent uuid.UUID
}

func newRecoveryFixture(t *testing.T) *recoveryFixture {
	tc := &fakeTemporal{}
	h := newHarness(t, withWebhookKey, noRateLimits, withTemporal(tc))
	f := &recoveryFixture{h: h, tc: tc}
	f.hook = h.createHook(map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}})
	publish := func() uuid.UUID {
		var acc models.EventAccepted
		h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, &acc)
		return acc.ID
	}
	f.dispatched, f.undisp = publish(), publish()
	if err := h.store.Events().MarkManyDispatched(context.Background(), []uuid.UUID{f.dispatched}); err != nil {
		t.Fatal(err)
	}
	f.late = h.createHook(map[string]any{"url": "https://example.com/late", "eventTypes": []string{"test.created"}})

	other, err := h.store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	otherPath := "/v1/workspaces/" + other.WorkspaceID.String()
	var oh models.WebhookCreated
	h.doJSON(http.MethodPost, otherPath+"/webhooks", other.Secret, map[string]any{"url": "https://example.com/o", "eventTypes": []string{"test.created"}}, http.StatusCreated, &oh)
	var oe models.EventAccepted
	h.doJSON(http.MethodPost, otherPath+"/events", other.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, &oe)
	if err := h.store.Events().MarkManyDispatched(context.Background(), []uuid.UUID{oe.ID}); err != nil {
		t.Fatal(err)
	}
	f.otherHook, f.otherEvent = oh.ID, oe.ID
	return f
}

func (f *recoveryFixture) redeliverPath(hook, event uuid.UUID) string {
	return f.h.hooksPath(hook.String(), "deliveries", event.String(), "redeliver")
}

func (f *recoveryFixture) setEnabled(hook uuid.UUID, enabled bool) {
	f.h.doJSON(http.MethodPut, f.h.hooksPath(hook.String()), f.h.admin.Secret, map[string]any{"enabled": enabled}, http.StatusOK, nil)
}

// Redelivery's checks, in the documented order, each in the one error
// shape; then the signal itself, to the event's workflow, and Temporal's
// absence as 503 with Retry-After.
func TestRedeliverChecks(t *testing.T) {
	f := newRecoveryFixture(t)
	h := f.h
	key := h.admin.Secret
	member := h.addKey(models.RoleMember).Secret
	hook, ev := f.hook.ID, f.dispatched
	h.run([]apiCase{
		{name: "member", method: http.MethodPost, url: f.redeliverPath(hook, ev), key: member, status: 403, wantCode: "forbidden"},
		{name: "another workspace's subscription", method: http.MethodPost, url: f.redeliverPath(f.otherHook, ev), key: key, status: 404, wantCode: "not_found"},
		{name: "another workspace's event", method: http.MethodPost, url: f.redeliverPath(hook, f.otherEvent), key: key, status: 404, wantCode: "not_found"},
		{name: "no such event", method: http.MethodPost, url: f.redeliverPath(hook, uuid.New()), key: key, status: 404, wantCode: "not_found"},
		{name: "malformed event id", method: http.MethodPost, url: h.hooksPath(hook.String(), "deliveries", "nope", "redeliver"), key: key, status: 404, wantCode: "not_found"},
		{name: "not a recipient", method: http.MethodPost, url: f.redeliverPath(f.late.ID, ev), key: key, status: 404, wantCode: "delivery_not_found"},
		{name: "not yet dispatched", method: http.MethodPost, url: f.redeliverPath(hook, f.undisp), key: key, status: 409, wantCode: "event_not_dispatched"},
		{name: "a body member", method: http.MethodPost, url: f.redeliverPath(hook, ev), key: key, body: map[string]any{"x": 1}, status: 400, wantCode: "validation_failed", wantField: "x"},
	})
	if len(f.tc.signals) != 0 {
		t.Fatalf("refused requests signalled: %+v", f.tc.signals)
	}

	f.setEnabled(hook, false)
	h.run([]apiCase{
		{name: "disabled", method: http.MethodPost, url: f.redeliverPath(hook, ev), key: key, status: 409, wantCode: "webhook_disabled"},
		// Disabled is told before not dispatched.
		{name: "disabled and not dispatched", method: http.MethodPost, url: f.redeliverPath(hook, f.undisp), key: key, status: 409, wantCode: "webhook_disabled"},
	})
	f.setEnabled(hook, true)

	var acc models.RedeliveryAccepted
	h.doJSON(http.MethodPost, f.redeliverPath(hook, ev), key, nil, http.StatusAccepted, &acc)
	if acc.EventID != ev || acc.SubscriptionID != hook {
		t.Fatalf("answer %+v", acc)
	}
	if len(f.tc.signals) != 1 {
		t.Fatalf("signals %+v, want 1", f.tc.signals)
	}
	s := f.tc.signals[0]
	if s.workflowID != workflows.DeliveryWorkflowID(ev) || s.name != workflows.RedeliverSignal || s.arg.SubscriptionID != hook ||
		!strings.HasPrefix(s.arg.RequestID, "api:") || s.opts.TaskQueue == "" {
		t.Fatalf("signal %+v", s)
	}

	// An event from before recipients were fixed counts the subscriptions
	// its delivery left a trace for.
	if _, err := h.db.ExecContext(context.Background(), `UPDATE events SET recipients = NULL WHERE id = ?`, ev); err != nil {
		t.Fatal(err)
	}
	h.run([]apiCase{{name: "old event, no trace", method: http.MethodPost, url: f.redeliverPath(hook, ev), key: key, status: 404, wantCode: "delivery_not_found"}})
	if _, err := h.db.ExecContext(context.Background(), `INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, event_date_created)
		VALUES (?, ?, 'failed', 3, now())`, ev, hook); err != nil {
		t.Fatal(err)
	}
	h.doJSON(http.MethodPost, f.redeliverPath(hook, ev), key, map[string]any{}, http.StatusAccepted, nil)

	f.tc.setErr(serviceerror.NewUnavailable("connection refused"))
	rec := h.do(http.MethodPost, f.redeliverPath(hook, ev), key, nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("Temporal away: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if e := checkError(t, rec, "temporal_unavailable", ""); strings.Contains(e.Error.Message, "connection refused") {
		t.Fatalf("the driver's text reached the caller: %q", e.Error.Message)
	}
}

// Without a Temporal client the API answers 503, never 500.
func TestRecoveryWithoutTemporal(t *testing.T) {
	h := newHarness(t, withWebhookKey, noRateLimits)
	hook := h.createHook(map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}})
	h.run([]apiCase{
		{name: "recover", method: http.MethodPost, url: h.hooksPath(hook.ID.String(), "recover"), key: h.admin.Secret,
			body: map[string]any{"since": time.Now().Add(-time.Hour).Format(time.RFC3339)}, status: 503, wantCode: "temporal_unavailable"},
		{name: "progress", method: http.MethodGet, url: h.hooksPath(hook.ID.String(), "recover"), key: h.admin.Secret, status: 503, wantCode: "temporal_unavailable"},
	})
}

// Recovery's window rules, its refusals and its start: the workflow's ID,
// search attributes, summary and input.
func TestRecoverChecksAndStart(t *testing.T) {
	f := newRecoveryFixture(t)
	h := f.h
	key := h.admin.Secret
	now := time.Now().UTC()
	path := h.hooksPath(f.hook.ID.String(), "recover")
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	h.run([]apiCase{
		{name: "no body", method: http.MethodPost, url: path, key: key, status: 400, wantCode: "invalid_json"},
		{name: "since missing", method: http.MethodPost, url: path, key: key, body: map[string]any{}, status: 400, wantCode: "validation_failed", wantField: "since"},
		{name: "since malformed", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": "yesterday"}, status: 400, wantCode: "validation_failed", wantField: "since"},
		{name: "since not a string", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": 5}, status: 400, wantCode: "validation_failed", wantField: "since"},
		{name: "since in the future", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(time.Hour)}, status: 400, wantCode: "validation_failed", wantField: "since"},
		{name: "since beyond retention", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(-91 * 24 * time.Hour)}, status: 400, wantCode: "validation_failed", wantField: "since"},
		{name: "until before since", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(-time.Hour), "until": at(-2 * time.Hour)}, status: 400, wantCode: "validation_failed", wantField: "until"},
		{name: "until equals since", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(-time.Hour), "until": at(-time.Hour)}, status: 400, wantCode: "validation_failed", wantField: "until"},
		{name: "until malformed", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(-time.Hour), "until": "soon"}, status: 400, wantCode: "validation_failed", wantField: "until"},
		{name: "since with a +24:00 offset", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": now.Add(23*time.Hour).Format("2006-01-02T15:04:05") + "+24:00"}, status: 400, wantCode: "validation_failed", wantField: "since"},
		{name: "unknown member", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(-time.Hour), "from": "x"}, status: 400, wantCode: "validation_failed", wantField: "from"},
		{name: "another workspace's subscription", method: http.MethodPost, url: h.hooksPath(f.otherHook.String(), "recover"), key: key, body: map[string]any{"since": at(-time.Hour)}, status: 404, wantCode: "not_found"},
		{name: "member", method: http.MethodPost, url: path, key: h.addKey(models.RoleMember).Secret, body: map[string]any{"since": at(-time.Hour)}, status: 403, wantCode: "forbidden"},
	})
	f.setEnabled(f.hook.ID, false)
	h.run([]apiCase{{name: "disabled", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(-time.Hour)}, status: 409, wantCode: "webhook_disabled"}})
	f.setEnabled(f.hook.ID, true)
	if len(f.tc.starts) != 0 {
		t.Fatalf("refused requests started %d recoveries", len(f.tc.starts))
	}

	// until in the future is taken as now.
	var rec models.WebhookRecovery
	h.doJSON(http.MethodPost, path, key, map[string]any{"since": at(-time.Hour), "until": at(time.Hour)}, http.StatusAccepted, &rec)
	if rec.ID != "recovery-1" || rec.SubscriptionID != f.hook.ID || rec.State != models.RecoveryRunning || rec.Done ||
		!rec.Since.Equal(now.Add(-time.Hour).Truncate(time.Second)) || rec.Until.After(time.Now()) || rec.Until.Before(now) {
		t.Fatalf("answer %+v", rec)
	}
	opts, in := f.tc.starts[0], f.tc.inputs[0]
	if opts.ID != workflows.RecoverWorkflowID(f.hook.ID) || !strings.Contains(opts.StaticSummary, f.hook.ID.String()) ||
		opts.TypedSearchAttributes.Size() != 2 || !opts.WorkflowExecutionErrorWhenAlreadyStarted {
		t.Fatalf("start options %+v", opts)
	}
	if in.WorkspaceID != h.admin.WorkspaceID || in.SubscriptionID != f.hook.ID || !in.Since.Equal(rec.Since) || !in.Until.Equal(rec.Until) {
		t.Fatalf("input %+v", in)
	}

	// An offset is read and answered in UTC, like every instant.
	east := time.FixedZone("", 2*3600)
	r := h.do(http.MethodPost, path, key, map[string]any{"since": now.Add(-time.Hour).In(east).Format(time.RFC3339)})
	if r.Code != http.StatusAccepted || !strings.Contains(r.Body.String(), `"since":"`+now.Add(-time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)+`"`) {
		t.Fatalf("since with an offset: %d %s", r.Code, r.Body)
	}

	f.tc.running = true
	r = h.do(http.MethodPost, path, key, map[string]any{"since": at(-time.Hour)})
	if r.Code != http.StatusConflict {
		t.Fatalf("while running: %d %s", r.Code, r.Body)
	}
	if e := checkError(t, r, "recovery_running", ""); !strings.Contains(e.Error.Message, "recovery-first") {
		t.Fatalf("refusal does not name the running recovery: %q", e.Error.Message)
	}
	f.tc.running = false
	f.tc.setErr(context.DeadlineExceeded)
	h.run([]apiCase{{name: "Temporal away", method: http.MethodPost, url: path, key: key, body: map[string]any{"since": at(-time.Hour)}, status: 503, wantCode: "temporal_unavailable"}})
}

// GET .../recover: the latest recovery's progress from the workflow's
// query; none is 404 recovery_not_found; Temporal away is 503.
func TestRecoveryProgress(t *testing.T) {
	f := newRecoveryFixture(t)
	h := f.h
	path := h.hooksPath(f.hook.ID.String(), "recover")
	h.run([]apiCase{
		{name: "none yet", method: http.MethodGet, url: path, key: h.admin.Secret, status: 404, wantCode: "recovery_not_found"},
		{name: "another workspace's subscription", method: http.MethodGet, url: h.hooksPath(f.otherHook.String(), "recover"), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "member", method: http.MethodGet, url: path, key: h.addKey(models.RoleMember).Secret, status: 403, wantCode: "forbidden"},
	})
	done := time.Now().UTC().Truncate(time.Second)
	f.tc.progress = &workflows.RecoverProgress{WebhookRecovery: models.WebhookRecovery{
		ID: "r1", SubscriptionID: f.hook.ID, State: models.RecoveryCompleted, Found: 4, Redelivered: 4, Done: true, FinishedAt: &done,
	}, Cursor: &activities.RecoverCursor{EventID: uuid.New()}}
	var got map[string]any
	h.doJSON(http.MethodGet, path, h.admin.Secret, nil, http.StatusOK, &got)
	if got["id"] != "r1" || got["found"] != 4.0 || got["state"] != "completed" || got["done"] != true {
		t.Fatalf("progress %v", got)
	}
	if _, ok := got["cursor"]; ok {
		t.Fatalf("the workflow's cursor leaked into the answer: %v", got)
	}
	f.tc.setErr(serviceerror.NewDeadlineExceeded("no worker answered"))
	h.run([]apiCase{{name: "Temporal away", method: http.MethodGet, url: path, key: h.admin.Secret, status: 503, wantCode: "temporal_unavailable"}})
}

// A redelivery with an Idempotency-Key names itself in its signal by the
// key (hashed, within the caller's scope), the same on every retry, so the
// event's workflow can drop a repeat; another key, another name; without
// the header, none.
func TestRedeliverSignalNamesTheIdempotencyKey(t *testing.T) {
	f := newRecoveryFixture(t)
	h := f.h
	path := f.redeliverPath(f.hook.ID, f.dispatched)
	for _, k := range []string{"redeliver-1", "redeliver-2", ""} {
		rec := h.do(http.MethodPost, path, h.admin.Secret, map[string]any{}, "Idempotency-Key", k)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("redeliver (key %q): %d %s", k, rec.Code, rec.Body)
		}
	}
	if len(f.tc.signals) != 3 {
		t.Fatalf("signals %+v, want 3", f.tc.signals)
	}
	a, b, none := f.tc.signals[0].arg.ID, f.tc.signals[1].arg.ID, f.tc.signals[2].arg.ID
	if !strings.HasPrefix(a, "idem:") || a == b || !strings.HasPrefix(b, "idem:") || none != "" || strings.Contains(a, "redeliver-1") {
		t.Fatalf("signal ids %q, %q, %q: want two distinct hashed ids, then none", a, b, none)
	}
}

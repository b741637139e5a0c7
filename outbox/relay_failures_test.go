package outbox_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/outbox"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// startRefuser starts delivery workflows as a server would (none runs),
// except that a start of a workflow ID in refused fails with its error.
type startRefuser struct {
	client.Client // calls nothing else; a nil embedded client panics if it did
	mu            sync.Mutex
	refused       map[string]error
}

func (s *startRefuser) ExecuteWorkflow(ctx context.Context, opts client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as a call on a cancelled context does
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.refused[opts.ID]
}

// refusedFixture is a backlog of five events whose first (the first a
// claim takes) Temporal refuses, and the events outbox's relay, making one
// call at a time so that a refusal cancelling the batch would leave every
// other event unsent.
type refusedFixture struct {
	*backlogFixture
	bad      uuid.UUID
	tc       *startRefuser
	relay    outbox.Relay[models.Event]
	logs     *bytes.Buffer
	failures int // counted by OnFailed
}

func newRefusedFixture(t *testing.T, refusal error) *refusedFixture {
	t.Helper()
	f := &refusedFixture{backlogFixture: newBacklogFixture(t), logs: new(bytes.Buffer)}
	f.wait(5)
	if err := f.db.NewRaw(`SELECT id FROM events ORDER BY date_created, id LIMIT 1`).Scan(context.Background(), &f.bad); err != nil {
		t.Fatal(err)
	}
	f.tc = &startRefuser{refused: map[string]error{workflows.DeliveryWorkflowID(f.bad): refusal}}
	f.relay = outbox.Relay[models.Event]{
		Queue:       outbox.NewEvents(outbox.Deps{Temporal: f.tc, Store: f.st, TaskQueue: "q"}, nil),
		Parallelism: 1,
		Log:         slog.New(slog.NewTextHandler(f.logs, nil)),
		OnFailed:    func() { f.failures++ },
	}
	return f
}

// outboxRow is an event's outbox state.
type outboxRow struct {
	Dispatched bool
	Failures   int
	RetryIn    float64 // seconds until it may be claimed again
}

func (f *refusedFixture) row(id uuid.UUID) outboxRow {
	f.t.Helper()
	var r outboxRow
	err := f.db.NewRaw(`SELECT dispatched_at IS NOT NULL, dispatch_failures,
			coalesce(extract(epoch FROM dispatch_claimed_until - now()), 0)::float8
		FROM events WHERE id = ?`, id).Scan(context.Background(), &r.Dispatched, &r.Failures, &r.RetryIn)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *refusedFixture) undispatched() int {
	f.t.Helper()
	n, err := f.db.NewSelect().TableExpr("events").Where("dispatched_at IS NULL").Count(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// An event whose start Temporal refuses fails alone: its batch-mates are
// marked dispatched in the same sweep and the drain succeeds. The event
// counts the failure, is logged once by id and count, and is not claimed
// again before its retry time, 1 s after the first failure and 2 s after
// the second.
func TestRelayHoldsBackAnEventTemporalRefuses(t *testing.T) {
	f := newRefusedFixture(t, serviceerror.NewInvalidArgument("input refused"))
	ctx := context.Background()

	if n, err := f.relay.Drain(ctx); err != nil || n != 4 {
		t.Fatalf("drain: %d sent (%v), want the 4 others and no error", n, err)
	}
	if n := f.undispatched(); n != 1 {
		t.Fatalf("%d events undispatched after the drain, want only the refused one", n)
	}
	r := f.row(f.bad)
	if r.Dispatched || r.Failures != 1 || r.RetryIn <= 0.5 || r.RetryIn > 1 {
		t.Fatalf("refused event %+v, want undispatched, 1 failure, retried in about 1 s", r)
	}
	logged := f.logs.String()
	if strings.Count(logged, "level=WARN") != 1 || !strings.Contains(logged, "outbox=events") ||
		!strings.Contains(logged, "id="+f.bad.String()) || !strings.Contains(logged, "failures=1") {
		t.Fatalf("logged %q, want one warning naming the outbox, the event and its failure count", logged)
	}

	if claimed, _, err := f.relay.Sweep(ctx); err != nil || claimed != 0 {
		t.Fatalf("sweep before the retry time: claimed %d (%v), want nothing", claimed, err)
	}
	time.Sleep(time.Duration(r.RetryIn*float64(time.Second)) + 100*time.Millisecond)
	if claimed, sent, err := f.relay.Sweep(ctx); err != nil || claimed != 1 || sent != 0 {
		t.Fatalf("sweep after the retry time: claimed %d, sent %d (%v); want the refused event, refused again", claimed, sent, err)
	}
	if r := f.row(f.bad); r.Failures != 2 || r.RetryIn <= 1.5 || r.RetryIn > 2 {
		t.Fatalf("refused twice: %+v, want 2 failures, retried in about 2 s", r)
	}
	if f.failures != 2 {
		t.Fatalf("OnFailed heard %d failures, want 2", f.failures)
	}
}

// A start failing for anything but its own input (Temporal unavailable,
// refusing this client, failing inside) still stops the batch: the others
// would fail alike. Nothing is sent, no event is counted
// against or held back, and once Temporal is back all go at once.
func TestRelayStopsItsBatchWhileTemporalIsUnavailable(t *testing.T) {
	for name, refusal := range map[string]error{
		"unavailable":        serviceerror.NewUnavailable("connection refused"),
		"resource exhausted": serviceerror.NewResourceExhausted(0, "namespace rate limit exceeded"),
		"deadline exceeded":  serviceerror.NewDeadlineExceeded("deadline exceeded"),
		"context deadline":   context.DeadlineExceeded,
		// Not the change's fault either: every row would be charged.
		"permission denied":   serviceerror.NewPermissionDenied("certificate expired", ""),
		"namespace not found": serviceerror.NewNamespaceNotFound("default"),
		"internal":            serviceerror.NewInternal("persistence failure"),
	} {
		t.Run(name, func(t *testing.T) {
			f := newRefusedFixture(t, refusal)
			ctx := context.Background()
			if claimed, sent, err := f.relay.Sweep(ctx); err == nil || claimed != 5 || sent != 0 {
				t.Fatalf("sweep: claimed %d, sent %d (%v); want 5, none sent and the error", claimed, sent, err)
			}
			if n := f.undispatched(); n != 5 {
				t.Fatalf("%d events undispatched, want all 5", n)
			}
			if r := f.row(f.bad); r.Failures != 0 || r.RetryIn != 0 || f.failures != 0 {
				t.Fatalf("the event Temporal was unavailable for: %+v, %d failures heard; want none counted, claimable at once", r, f.failures)
			}

			f.tc.mu.Lock()
			f.tc.refused = nil
			f.tc.mu.Unlock()
			if n, err := f.relay.Drain(ctx); err != nil || n != 5 {
				t.Fatalf("drain with Temporal back: %d sent (%v), want all 5 at once", n, err)
			}
		})
	}
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/workflows"
)

// What scenarios 10 and 11 do to the stack around their windows: 10 runs
// its workers on another retry schedule, and both take A's subscriptions
// away afterwards so that A's backlog reaches no later scenario.

// restartWorkers stops every worker process and starts it again with
// WEBHOOK_RETRY_SCHEDULE set to schedule (empty: the stack's own). The
// relay fixes the schedule into each workflow's input as it starts it, so
// the new one applies to events dispatched from then on and workflows
// already running keep theirs. A worker stops gracefully: attempts in
// flight finish first (up to SHUTDOWN_TIMEOUT, the stack's 30 s).
func (h *harness) restartWorkers(ctx context.Context, schedule string) error {
	t0 := time.Now()
	if h.workerEnv == nil {
		for _, p := range h.st.Workers {
			h.workerEnv = append(h.workerEnv, slices.Clone(p.Env))
		}
	}
	for i, p := range h.st.Workers {
		if _, err := p.Terminate(40 * time.Second); err != nil {
			return err
		}
		// The stack's environment, then the schedule: exec keeps the last
		// of duplicate keys.
		p.Env = slices.Clone(h.workerEnv[i])
		if schedule != "" {
			p.Env = append(p.Env, "WEBHOOK_RETRY_SCHEDULE="+schedule)
		}
		if err := p.Start(ctx, time.Minute); err != nil {
			return err
		}
	}
	what := schedule
	if what == "" {
		what = "the stack's"
	}
	h.logf("   workers restarted with retry schedule %s in %v", what, time.Since(t0).Round(100*time.Millisecond))
	return nil
}

// retire deletes A's subscriptions through the API (its probe ones and
// more), runs between (10 restores its workers there), then, up to
// neighbourDrain, terminates A's delivery workflows as the outbox starts
// them and waits until every event of A was dispatched, its workflow
// closed, and A's endpoints hold no request. Those workflows would
// only skip their attempts (the subscriptions are gone), but 10 leaves
// thousands, and their Temporal tasks would be the next scenario's
// neighbour for a minute or more.
func (h *harness) retire(ctx context.Context, id string, a *noisyWS, more []*trackedEndpoint, between func()) {
	all := slices.Concat(a.healthy, a.failing, more)
	for _, e := range all {
		if e.subID == "" {
			continue // never subscribed (the scenario failed first)
		}
		if err := a.c.unsubscribe(ctx, e.subID); err != nil {
			h.notef("%s: deleting A's subscription: %v", id, err)
		}
	}
	if between != nil {
		between()
	}
	t0 := time.Now()
	deadline := t0.Add(h.sc.neighbourDrain)
	closed := map[string]bool{} // A's events whose workflow is known closed
	terminated := 0
	var failure error
	for first := true; ctx.Err() == nil; first = false {
		busy := 0
		for _, e := range all {
			busy += int(e.InFlight())
		}
		var evs []struct {
			ID         string `bun:"id"`
			Dispatched bool   `bun:"dispatched"`
		}
		err := h.st.DB.NewRaw("SELECT id::text, dispatched_at IS NOT NULL AS dispatched FROM events WHERE workspace_id = ?", a.c.ws.WorkspaceID).Scan(ctx, &evs)
		if err != nil {
			h.notef("%s: reading A's events: %v", id, err)
			return
		}
		// A dispatched event's workflow started before dispatched_at was
		// set, so one Temporal does not find is one that closed.
		var open []string
		undispatched := 0
		for _, ev := range evs {
			switch {
			case closed[ev.ID]:
			case ev.Dispatched:
				open = append(open, ev.ID)
			default:
				undispatched++
			}
		}
		if first {
			h.notef("%s: when A's subscriptions were deleted, after the cutoff, %d of its %d events were undispatched and %d requests to its endpoints open",
				id, undispatched, len(evs), busy)
		}
		n, err := h.terminate(ctx, open, closed)
		terminated += n
		if err != nil && failure == nil {
			failure = err
		}
		left := undispatched + len(open) - n
		if left == 0 && busy == 0 {
			h.notef("%s: the harness terminated %d of A's delivery workflows still running (every attempt left would have been skipped); A's backlog was gone %v after the deletion",
				id, terminated, time.Since(t0).Round(100*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			why := ""
			if failure != nil {
				why = fmt.Sprintf("; a termination failed: %v", failure)
			}
			h.notef("%s: %v after A's subscriptions were deleted, %d of its events were still undispatched or their workflows running (%d terminated%s), %d requests to its endpoints open: the next scenario starts beside them",
				id, h.sc.neighbourDrain, left, terminated, why, busy)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// terminate ends the delivery workflows of the events, eight at a time,
// marking in closed each one ended or found closed already; it returns
// how many it ended and the first other error.
func (h *harness) terminate(ctx context.Context, events []string, closed map[string]bool) (int, error) {
	var mu sync.Mutex
	var first error
	ended := 0
	next := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ev := range next {
				id, err := uuid.Parse(ev)
				if err == nil {
					err = h.st.TC.TerminateWorkflow(ctx, workflows.DeliveryWorkflowID(id), "", "bench: the workspace's subscriptions were deleted")
				}
				var notFound *serviceerror.NotFound
				mu.Lock()
				switch {
				case err == nil:
					ended++
					closed[ev] = true
				case errors.As(err, &notFound):
					closed[ev] = true
				case first == nil:
					first = err
				}
				mu.Unlock()
			}
		})
	}
	for _, ev := range events {
		next <- ev
	}
	close(next)
	wg.Wait()
	return ended, first
}

package reliability

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// ackBudget is how soon after the API is back every event in flight at
// its crash must be answered 202.
const ackBudget = 10 * time.Second

// crashKills are the shares of the burst within which the API is killed.
var crashKills = [][2]float64{{0.1, 0.3}, {0.4, 0.6}, {0.7, 0.9}}

// scenarioAPICrashLoop: 8 careful publishers (carefulClient: each event
// re-sent with its Idempotency-Key until a 202) publish a burst to five
// subscriptions while the API is SIGKILLed three times and restarted.
// Every event must be answered 202 within ackBudget of the restart that
// followed its first try, be stored once (one event id per key: the
// events' payload markers are counted in PostgreSQL) and be delivered.
func scenarioAPICrashLoop(t *testing.T, h *harness) tally {
	ctx := context.Background()
	c := h.workspace(t, "g-api-crash-loop")
	eps := make([]*endpoint, 5)
	for i := range eps {
		eps[i] = addEndpoint(h.rc, answerOK, 0)
	}
	subs := h.subscribe(t, c, h.rc, expectDelivered, eps...)

	n := h.sc.crashEvents
	cc := newCarefulClient(c, h.sc.crashGiveUp)
	p := &publisher{c: c, send: cc.publish}
	done := make(chan struct{})
	begin := time.Now()
	go func() { defer close(done); p.burst(ctx, n, 8) }()
	restarts := h.killDuring(t, h.st.API, p, n, done, crashKills...)
	<-done
	h.notef(t, "%d events published by 8 careful publishers in %v", n, time.Since(begin).Round(time.Millisecond))

	traces := cc.snapshot()
	h.judgeAcks(t, traces, restarts)
	h.judgeDoubled(t, c.WorkspaceID, traces)
	return h.settle(t, subs, p.ids())
}

// judgeAcks fails the scenario for an event never answered 202, or
// answered later than ackBudget after the restart that followed its first
// try, and notes the numbers, overall and per kill.
func (h *harness) judgeAcks(t *testing.T, traces []trace, restarts []restart) {
	t.Helper()
	ready := make([]time.Time, len(restarts))
	for i, r := range restarts {
		ready[i] = r.ready
	}
	var acked, crossed, late, inProgress int
	var worst, unackedWorst time.Duration // unackedWorst: how long an event given up had waited since its restart
	worstSeq := 0
	var unacked []string
	for _, tr := range traces {
		inProgress += tr.inProgress
		if tr.acked.IsZero() {
			why := "refused"
			if !tr.gaveUp.IsZero() {
				why = fmt.Sprintf("given up %v after its first try", tr.gaveUp.Sub(tr.first).Round(time.Second))
				if d, ok := ackAfterRestart(tr.first, tr.gaveUp, ready); ok {
					unackedWorst = max(unackedWorst, d)
				}
			}
			unacked = append(unacked, fmt.Sprintf("event %d (key %s): %s after %d tries (%d answered 409 idempotency_request_in_progress); last answer %s",
				tr.seq, tr.key, why, tr.tries, tr.inProgress, tr.last))
			continue
		}
		acked++
		d, ok := ackAfterRestart(tr.first, tr.acked, ready)
		if !ok {
			continue
		}
		crossed++
		if d > worst {
			worst, worstSeq = d, tr.seq
		}
		if d > ackBudget {
			late++
		}
	}
	var since time.Time
	for i, r := range restarts {
		// The events this restart is the first after their first try,
		// unanswered at the kill: in flight, or first tried while down.
		var hit, missed int
		for _, tr := range traces {
			if tr.first.After(since) && !tr.first.After(r.ready) && (tr.acked.IsZero() || tr.acked.After(r.killed)) {
				hit++
				if tr.acked.IsZero() || tr.acked.Sub(r.ready) > ackBudget {
					missed++
				}
			}
		}
		since = r.ready
		h.notef(t, "kill %d: %d events in flight or first tried while the API was down, %d of them not answered 202 within %v of the restart",
			i+1, hit, missed, ackBudget)
	}
	overall := fmt.Sprintf("max %v (event %d)", worst.Round(time.Millisecond), worstSeq)
	if len(unacked) > 0 {
		overall = fmt.Sprintf("max at least %v (events never answered, given up then; of those answered, max %v)",
			unackedWorst.Round(time.Millisecond), worst.Round(time.Millisecond))
	}
	h.notef(t, "acknowledged %d of %d, unacknowledged %d; from the restart after an event's first try to its 202: %s, "+
		"%d answered in all after a restart, %d of them over %v; 409 idempotency_request_in_progress answers: %d",
		acked, len(traces), len(unacked), overall, crossed, late, ackBudget, inProgress)
	if len(unacked) > 0 {
		h.failf(t, "%d of %d events never answered 202, e.g. %s", len(unacked), len(traces), unacked[0])
		for _, u := range unacked[1:] {
			t.Log("unacknowledged " + u)
		}
	}
	if late > 0 {
		h.failf(t, "%d events answered 202 more than %v after the restart that followed their first try (max %v, event %d)",
			late, ackBudget, worst.Round(time.Millisecond), worstSeq)
	}
}

// storedEvent is one event row of the scenario's workspace.
type storedEvent struct {
	ID     string `bun:"id"`
	Marker string `bun:"marker"`
}

// judgeDoubled reads every event stored in the workspace and fails the
// scenario when one marker (one Idempotency-Key) has more than one event
// id, or when a 202's event id is not the one stored for its marker.
func (h *harness) judgeDoubled(t *testing.T, workspaceID string, traces []trace) {
	t.Helper()
	var rows []storedEvent
	err := h.st.DB.NewRaw(`SELECT id::text AS id, coalesce(data->>'marker', '') AS marker
		FROM events WHERE workspace_id = ? ORDER BY date_created, id`, workspaceID).Scan(context.Background(), &rows)
	if err != nil {
		h.failf(t, "read the workspace's events: %v", err)
		return
	}
	byMarker, doubled, unmarked := groupByMarker(rows)
	storedUnacked := 0
	for _, tr := range traces {
		ids := byMarker[tr.marker]
		switch {
		case tr.id == "" && len(ids) > 0:
			storedUnacked++
		case tr.id != "" && !slices.Contains(ids, tr.id):
			h.failf(t, "event %d was answered 202 with id %s, but its marker is stored as %v", tr.seq, tr.id, ids)
		}
	}
	h.notef(t, "%d events stored for %d keys: doubled %d, stored but never answered 202 %d",
		len(rows), len(traces), len(doubled), storedUnacked)
	if unmarked > 0 {
		h.failf(t, "%d stored events carry no marker", unmarked)
	}
	if len(doubled) > 0 {
		h.failf(t, "%d Idempotency-Keys stored as more than one event, e.g. %s", len(doubled), doubled[0])
	}
}

// groupByMarker groups stored events by marker, lists each marker stored
// as more than one event id, and counts the events without a marker.
func groupByMarker(rows []storedEvent) (byMarker map[string][]string, doubled []string, unmarked int) {
	byMarker = map[string][]string{}
	var order []string
	for _, r := range rows {
		if r.Marker == "" {
			unmarked++
			continue
		}
		if byMarker[r.Marker] == nil {
			order = append(order, r.Marker)
		}
		byMarker[r.Marker] = append(byMarker[r.Marker], r.ID)
	}
	for _, m := range order {
		if ids := byMarker[m]; len(ids) > 1 {
			doubled = append(doubled, fmt.Sprintf("marker %s: events %s", m, strings.Join(ids, ", ")))
		}
	}
	return byMarker, doubled, unmarked
}

package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/receiver"
)

// Scenario 9, the noisy neighbour (issue 18, item 5): workspace A
// publishes a burst to ten subscriptions, five of which fail every
// attempt, while workspace B publishes at a steady rate to one healthy
// subscription; each sends a test event and a redelivery every probeEvery.
// B alone, with the same load and duration, is the baseline, measured
// first in the same run.

const (
	noisyRate     = 5.0              // B's events per second
	noisyHealthyA = 5                // A's subscriptions answering 204 ...
	noisyFailingA = 5                // ... and those answering 500 to every attempt
	probeEvery    = 10 * time.Second // each workspace's test event and redelivery
	noisyP99Ratio = 2.0              // B's p99 during the burst, at most this × alone
	probeP99      = 2 * time.Second  // test events' and redeliveries' p99
)

// noisyWS is one workspace of the scenario.
type noisyWS struct {
	name    string
	c       *apiClient
	healthy []*trackedEndpoint
	failing []*trackedEndpoint
	pr      *probes
}

// aLoad is what workspace A does in a window that ends at end (the
// burst of scenario 9, the flood of 10, the slow neighbour of 11): it
// returns what it published once done.
type aLoad func(ctx context.Context, end time.Time) *publication

// windowSpec is how long a window publishes, and the bound on waiting for
// its receipts (B's events and both workspaces' probes) after it.
type windowSpec struct{ dur, settle time.Duration }

// noisyWindow is what one window measured.
type noisyWindow struct {
	b      []expected   // B's events
	bPub   *publication // B's publishing
	aPub   *publication // A's (nil when B is alone)
	use    usage
	cutoff time.Time // receipts later than this count as missing
	probes map[string]probeSet
	// dispatch is B's events' publish→dispatched_at, which tells the
	// outbox's part of the wait from Temporal's; those undispatched at the
	// cutoff are counted at it, and undispatched says how many.
	dispatch     lat
	undispatched int
	// record is B's events' publish→their first attempt's record
	// (recordLag), unrecorded how many had none by the cutoff.
	record     lat
	unrecorded int
	// server is where starts spent their time inside Temporal's server
	// (serverKnown: read, on the stack).
	server      serverWaits
	serverKnown bool
}

// probeSet is one workspace's probes of one window.
type probeSet struct {
	tests, redeliv []expected
	answers        []time.Duration
	refused        []string
}

func (h *harness) scenario9(ctx context.Context) error {
	a, err := h.noisyWorkspace(ctx, "bench-9-A", noisyHealthyA, noisyFailingA)
	if err != nil {
		return err
	}
	b, err := h.noisyWorkspace(ctx, "bench-9-B", 1, 0)
	if err != nil {
		return err
	}
	perWindow := int(math.Ceil(h.sc.noisyDur.Seconds() / probeEvery.Seconds()))
	// B redelivers in both windows, A only in the burst's: its earlier
	// events come after B alone, whose window their retries (to the
	// failing subscriptions, 5 s later) would otherwise reach.
	if err := h.earlierEvents(ctx, b, 2*perWindow); err != nil {
		return err
	}
	spec := windowSpec{h.sc.noisyDur, h.sc.noisySettle}
	h.logf("   B alone for %v", h.sc.noisyDur)
	alone := h.noisyRun(ctx, spec, b, nil, nil)
	if err := h.earlierEvents(ctx, a, perWindow); err != nil {
		return err
	}
	h.logf("   B during A's burst of %d events, for %v", h.sc.noisyBurst, h.sc.noisyDur)
	burst := func(ctx context.Context, _ time.Time) *publication {
		return publishCount(ctx, a.c, publishers, h.sc.noisyBurst)
	}
	flood := h.noisyRun(ctx, spec, b, a, burst)
	h.noisyRows(alone, flood, a)
	// A's backlog (most of its 25,000 healthy deliveries and the failing
	// ones' retries) outlasts the window: retired, it reaches no later one.
	h.retire(ctx, "9", a, nil, nil)
	return nil
}

// noisyWorkspace bootstraps a workspace with its subscriptions; its name
// in the scenario's rows is the workspace name's last letter (A or B).
func (h *harness) noisyWorkspace(ctx context.Context, wsName string, healthy, failing int) (*noisyWS, error) {
	c, err := h.workspace(ctx, wsName)
	if err != nil {
		return nil, err
	}
	w := &noisyWS{name: wsName[len(wsName)-1:], c: c}
	var all []*trackedEndpoint
	for i := range healthy + failing {
		status := http.StatusNoContent
		if i >= healthy {
			status = http.StatusInternalServerError
		}
		all = append(all, h.trackedEndpoint(status))
	}
	w.healthy, w.failing = all[:healthy], all[healthy:]
	eps := make([]*receiver.Endpoint, 0, len(all))
	for _, e := range all {
		eps = append(eps, e.Endpoint)
	}
	ids, err := subscribeEndpoints(ctx, c, eps)
	if err != nil {
		return nil, err
	}
	for i, e := range all {
		e.subID = ids[i]
	}
	w.pr = &probes{c: c, healthy: w.healthy}
	return w, nil
}

// earlierEvents publishes enough events for redeliveries (one per
// healthy subscription and event) and waits until every healthy
// subscription has them: an event not yet dispatched cannot be redelivered.
func (h *harness) earlierEvents(ctx context.Context, w *noisyWS, redeliveries int) error {
	n := (redeliveries + len(w.healthy) - 1) / len(w.healthy)
	var want []expected
	for i := range n {
		t0 := time.Now()
		id, err := w.c.publish(ctx, -1-i)
		if err != nil {
			return err
		}
		w.pr.earlier = append(w.pr.earlier, id)
		for _, e := range w.healthy {
			want = append(want, expected{ep: e, id: id, sent: t0})
		}
	}
	if !waitAll(ctx, time.Now().Add(30*time.Second), want) {
		return fmt.Errorf("%s's %d earlier events not all delivered within 30 s", w.name, n)
	}
	return nil
}

// waitAll waits until every expected receipt arrived, or until deadline.
func waitAll(ctx context.Context, deadline time.Time, want ...[]expected) bool {
	for ctx.Err() == nil && time.Now().Before(deadline) {
		done := true
		for _, w := range want {
			done = done && allReceived(w)
		}
		if done {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// noisyRun is one window of spec.dur: B publishing at noisyRate with its
// probes and, when a is not nil, A doing load with its probes; then up to
// spec.settle for the receipts still due.
func (h *harness) noisyRun(ctx context.Context, spec windowSpec, b, a *noisyWS, load aLoad) noisyWindow {
	var r noisyWindow
	m := startMeter(h.st)
	sm := startServerMeter(ctx, h.st.TemporalMetricsAddr)
	end := time.Now().Add(spec.dur)
	var wg sync.WaitGroup
	ws := []*noisyWS{b}
	if a != nil {
		ws = append(ws, a)
		wg.Go(func() { r.aPub = load(ctx, end) })
	}
	for _, w := range ws {
		wg.Go(func() { w.pr.run(ctx, end) })
	}
	// Four clients, so a slow answer does not hold the next event back.
	r.bPub = publishPaced(ctx, b.c, 4, noisyRate, spec.dur)
	wg.Wait()
	r.bPub.mu.Lock()
	for id, t0 := range r.bPub.sent {
		r.b = append(r.b, expected{ep: b.healthy[0], id: id, sent: t0})
	}
	r.bPub.mu.Unlock()
	pending := [][]expected{r.b}
	for _, w := range ws {
		pending = append(pending, w.pr.pending())
	}
	waitAll(ctx, time.Now().Add(spec.settle), pending...)
	r.cutoff = time.Now()
	r.use = m.end()
	var err error
	if r.server, r.serverKnown, err = sm.end(ctx); err != nil {
		h.notef("reading Temporal's server metrics: %v", err)
	}
	r.dispatch, r.undispatched = h.dispatchLag(ctx, r.b, r.cutoff)
	r.record, r.unrecorded = h.recordLag(ctx, b.healthy[0].subID, r.b, r.cutoff)
	r.probes = map[string]probeSet{}
	for _, w := range ws {
		var p probeSet
		p.tests, p.redeliv, p.answers, p.refused = w.pr.taken()
		r.probes[w.name] = p
	}
	return r
}

// dispatchLag is publish→dispatched_at of events (the relay sets it once
// their workflows started; the database's clock is the machine's).
func (h *harness) dispatchLag(ctx context.Context, evs []expected, cutoff time.Time) (lat, int) {
	ids := eventIDs(evs)
	if len(ids) == 0 {
		return lat{}, 0
	}
	var rows []struct {
		ID           string     `bun:"id"`
		DispatchedAt *time.Time `bun:"dispatched_at"`
	}
	if err := h.st.DB.NewRaw("SELECT id::text, dispatched_at FROM events WHERE id::text IN (?)", bun.List(ids)).Scan(ctx, &rows); err != nil {
		h.notef("reading dispatched_at: %v", err)
		return lat{}, 0
	}
	at := map[string]time.Time{}
	for _, r := range rows {
		if r.DispatchedAt != nil {
			at[r.ID] = *r.DispatchedAt
		}
	}
	return lagUntil(evs, at, cutoff)
}

// recordLag is publish→the first attempt's record of events at one
// subscription: its date_created is when the attempt began, written once
// it ended, so dispatched→recorded is Temporal's part of the wait (the
// workflow's task, the activity's) and recorded→receipt the request's.
func (h *harness) recordLag(ctx context.Context, subID string, evs []expected, cutoff time.Time) (lat, int) {
	ids := eventIDs(evs)
	if len(ids) == 0 {
		return lat{}, 0
	}
	var rows []struct {
		ID string    `bun:"id"`
		At time.Time `bun:"date_created"`
	}
	err := h.st.DB.NewRaw(`SELECT event_id::text AS id, date_created FROM webhook_deliveries
		WHERE subscription_id = ? AND attempt_number = 1 AND event_id::text IN (?)`, subID, bun.List(ids)).Scan(ctx, &rows)
	if err != nil {
		h.notef("reading the delivery records: %v", err)
		return lat{}, 0
	}
	at := map[string]time.Time{}
	for _, r := range rows {
		at[r.ID] = r.At
	}
	return lagUntil(evs, at, cutoff)
}

// lagUntil is sent→at[id] of each event; one without a time by cutoff is
// counted at it (a lower bound, never dropped), and missing says how many.
func lagUntil(evs []expected, at map[string]time.Time, cutoff time.Time) (lat, int) {
	var d []time.Duration
	missing := 0
	for _, e := range evs {
		t, ok := at[e.id]
		if !ok || t.After(cutoff) {
			missing++
			t = cutoff
		}
		d = append(d, t.Sub(e.sent))
	}
	return summarize(d), missing
}

// eventIDs are the event ids of evs, in order.
func eventIDs(evs []expected) []string {
	ids := make([]string, 0, len(evs))
	for _, e := range evs {
		ids = append(ids, e.id)
	}
	return ids
}

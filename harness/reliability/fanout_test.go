package reliability

import (
	"context"
	"testing"
	"time"
)

// scenarioFanOut: events fanned out to as many subscriptions as a
// workspace may have (100 at full scale), every endpoint failing the whole
// schedule. Each (event, subscription) must end with exactly one record per
// attempt of the schedule. The delivery workflow's history is read through
// the Temporal client and its size printed: one workflow holds the whole
// fan-out.
func scenarioFanOut(t *testing.T, h *harness) tally {
	ctx := context.Background()
	c := h.workspace(t, "e-fanout-cap")
	eps := make([]*endpoint, h.sc.capSubs)
	for i := range eps {
		eps[i] = addEndpoint(h.rc, answerFailAll, 0)
	}
	subs := h.subscribe(t, c, h.rc, expectFailure, eps...)

	p := &publisher{c: c}
	p.burst(ctx, h.sc.capEvents, 2)
	if r := p.refusals(); len(r) > 0 {
		h.failf(t, "%d events not accepted, e.g. %s", len(r), r[0])
	}
	begin := time.Now()
	res := h.settle(t, subs, p.ids())
	h.notef(t, "%d events x %d subscriptions x %d attempts settled in %v",
		len(p.ids()), len(subs), attemptsPerSchedule, time.Since(begin).Round(time.Millisecond))
	for _, ev := range p.ids() {
		n, size, err := h.historySize(ctx, ev)
		if err != nil {
			h.failf(t, "history of %s: %v", workflowID(ev), err)
			continue
		}
		h.notef(t, "history of %s: %d events, %d bytes (%d subscriptions)", workflowID(ev), n, size, len(subs))
	}
	return res
}

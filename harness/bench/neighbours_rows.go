package bench

import (
	"fmt"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/config"
)

// floodRows adds scenario 10's rows: B during A's flood, the flood, then
// both workspaces' test events and redeliveries.
func (h *harness) floodRows(nb *neighbourB, w noisyWindow, a *noisyWS, limit config.RateLimit) {
	h.add(h.neighbourBRow(nb, "10b", "neighbours, B during A's flood (10c)", w, nil))
	h.add(h.burstRow("10c", fmt.Sprintf("neighbours, A's flood: %d clients on one key at the default event rate limit (%s, a client-side bucket: the bench runs without limits) for %v, to %d subscriptions, %d answering 500, retried on %s (latency: publish→receipt at the healthy ones)",
		publishers, limit, h.sc.neighbourDur.Round(time.Second), len(a.healthy)+len(a.failing), len(a.failing), floodSchedule), w, a))
	h.noteWaits("10b", w, true)
	h.probeRows([4]string{"10d", "10e", "10f", "10g"}, func(ws, what string) string {
		return fmt.Sprintf("neighbours, %s's %s during A's flood, request→receipt", ws, what)
	}, w, &nb.alone, nb.aloneID)
	h.noteRefusals("10", w)
}

// slowRows adds scenario 11's rows: B during A's slow neighbour, A's own
// load, then both workspaces' test events and redeliveries.
func (h *harness) slowRows(nb *neighbourB, w noisyWindow, a *noisyWS, slow []*trackedEndpoint) {
	ratio := func(r *row, l lat, known bool, ratio float64) {
		r.checks = append(r.checks, check{fmt.Sprintf("p99 ≤ %g × %s", neighbourRatio, nb.aloneID), known && ratio <= neighbourRatio})
	}
	h.add(h.neighbourBRow(nb, "11b", "neighbours, B during A's slow neighbour (11c)", w, ratio))
	h.add(h.slowRow(w, slow))
	h.noteWaits("11b", w, true)
	h.probeRows([4]string{"11d", "11e", "11f", "11g"}, func(ws, what string) string {
		where := ""
		if ws == "A" {
			where = " (to a healthy subscription of another event type)"
		}
		return fmt.Sprintf("neighbours, %s's %s during A's slow neighbour%s, request→receipt", ws, what, where)
	}, w, &nb.alone, nb.aloneID)
	h.noteRefusals("11", w)
}

// neighbourBRow is B's row during a neighbour: p99 ≤ neighbourP99, its
// ratio to B alone shown, and more checks by extra.
func (h *harness) neighbourBRow(nb *neighbourB, id, name string, w noisyWindow, extra func(r *row, l lat, known bool, ratio float64)) row {
	r, l, miss := bRow(id, name+", the same load as "+nb.aloneID, w)
	ratio, known := vsAlone(&r, l, miss, nb.aloneL, nb.aloneID)
	r.checks = []check{{"p99 ≤ " + ms(neighbourP99), l.n > 0 && l.p99 <= neighbourP99}}
	if extra != nil {
		extra(&r, l, known, ratio)
	}
	return r
}

// slowRow is A's load in 11: its events and their attempts at the slow
// subscriptions (latency: publish→the first request of each pair; those
// with none by the cutoff counted at it).
func (h *harness) slowRow(w noisyWindow, slow []*trackedEndpoint) row {
	p := w.aPub
	sent := p.sentCopy()
	var want []expected
	requests := 0
	for _, e := range slow {
		for ev, t0 := range sent {
			want = append(want, expected{ep: e, id: ev, sent: t0})
		}
		_, n := e.counts(sent)
		requests += n
	}
	d, miss := waits(want, w.cutoff)
	l := summarize(d)
	return row{id: "11c", name: fmt.Sprintf("neighbours, A's slow neighbour: %g events/s for %v to %d subscriptions answering after %v, past the 10 s response timeout (latency: publish→first request at them)",
		slowRate, h.sc.neighbourDur.Round(time.Second), len(slow), slowAnswer),
		throughput: fmt.Sprintf("%d accepted (accept p99 %s); by the cutoff %d of %d (event, subscription) pairs had a request (the rest counted at it), %d requests in all",
			len(sent), ms(summarize(p.accept).p99), len(want)-miss, len(want), requests),
		lat: &l}
}

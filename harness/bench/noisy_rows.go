package bench

import (
	"fmt"
	"strings"
	"time"
)

// noisyRows adds scenario 9's rows: B alone, B during A's burst, the
// burst itself, then the test events and redeliveries of each workspace.
func (h *harness) noisyRows(alone, flood noisyWindow, a *noisyWS) {
	dur := h.sc.noisyDur.Round(time.Second)
	bAlone, missAlone := waits(alone.b, alone.cutoff)
	la := summarize(bAlone)
	h.add(row{id: "9a", name: fmt.Sprintf("noisy neighbour, B alone: %g events/s to 1 subscription for %v, a test event and a redelivery every %v", noisyRate, dur, probeEvery),
		throughput: receivedText(len(alone.b), missAlone, alone.bPub), lat: &la, use: &alone.use})

	bFlood, missFlood := waits(flood.b, flood.cutoff)
	lf := summarize(bFlood)
	r := row{id: "9b", name: "noisy neighbour, B during A's burst (9c), the same load as 9a",
		throughput: receivedText(len(flood.b), missFlood, flood.bPub), lat: &lf, use: &flood.use}
	if la.n > 0 && lf.n > 0 && la.p99 > 0 {
		ratio := float64(lf.p99) / float64(la.p99)
		// Waits counted at the cutoff are lower bounds, and so is the ratio.
		atLeast := ""
		if missFlood > 0 {
			atLeast = "≥ "
		}
		r.vs = fmt.Sprintf("p99 %s%s × 9a's (p50 %s%s ×)", atLeast, num(ratio), atLeast, num(float64(lf.p50)/float64(la.p50)))
		r.checks = []check{{fmt.Sprintf("p99 ≤ %g × 9a", noisyP99Ratio), ratio <= noisyP99Ratio}}
	} else {
		r.checks = []check{{fmt.Sprintf("p99 ≤ %g × 9a", noisyP99Ratio), false}}
	}
	h.add(r)

	h.add(h.burstRow(flood, a))
	for _, w := range []struct {
		id string
		w  noisyWindow
	}{{"9a", alone}, {"9b", flood}} {
		d := w.w.dispatch
		if d.n == 0 {
			continue
		}
		rest := ""
		if w.w.undispatched > 0 {
			rest = fmt.Sprintf(" (%d undispatched at the cutoff, counted at it)", w.w.undispatched)
		}
		h.notef("%s: B's publish→dispatched (the outbox relay marks a claimed batch dispatched once its workflow starts returned; with eager start, attempt 1 may already be made): p50 %s, p99 %s, max %s%s",
			w.id, ms(d.p50), ms(d.p99), ms(d.max), rest)
	}

	for _, k := range []struct {
		id, what, ws string
		pick         func(probeSet) []expected
	}{
		{"9d", "test events", "A", func(p probeSet) []expected { return p.tests }},
		{"9e", "test events", "B", func(p probeSet) []expected { return p.tests }},
		{"9f", "redeliveries", "A", func(p probeSet) []expected { return p.redeliv }},
		{"9g", "redeliveries", "B", func(p probeSet) []expected { return p.redeliv }},
	} {
		p := flood.probes[k.ws]
		d, miss := waits(k.pick(p), flood.cutoff)
		l := summarize(d)
		r := row{id: k.id, name: fmt.Sprintf("noisy neighbour, %s's %s during the burst, request→receipt", k.ws, k.what),
			throughput: fmt.Sprintf("%d sent, %d received; POSTs answered in p99 %s", len(d), len(d)-miss, ms(summarize(p.answers).p99)),
			lat:        &l,
			checks:     []check{{"p99 ≤ " + ms(probeP99), l.n > 0 && l.p99 <= probeP99}}}
		if miss > 0 {
			r.throughput += fmt.Sprintf("; %d not received by the cutoff, counted at it", miss)
		}
		if base, ok := alone.probes[k.ws]; ok {
			bd, bmiss := waits(k.pick(base), alone.cutoff)
			bl := summarize(bd)
			r.vs = fmt.Sprintf("alone (9a): p50 %s, p99 %s of %d", ms(bl.p50), ms(bl.p99), bl.n)
			if bmiss > 0 {
				r.vs += fmt.Sprintf(", %d missing", bmiss)
			}
		}
		h.add(r)
	}
	for _, w := range []noisyWindow{alone, flood} {
		for ws, ps := range w.probes {
			if len(ps.refused) > 0 {
				h.notef("9: %s's test events and redeliveries: %d refused (counted as not received), e.g. %s", ws, len(ps.refused), ps.refused[0])
			}
		}
		if n := w.bPub.refused.Load(); n > 0 {
			h.notef("9: B: %d publishes refused, e.g. %s", n, w.bPub.refusal())
		}
	}
	if flood.burst != nil {
		if n := flood.burst.refused.Load(); n > 0 {
			h.notef("9: A: %d publishes refused, e.g. %s", n, flood.burst.refusal())
		}
	}
}

// burstRow is A's burst: how fast it was accepted, and its deliveries
// (publish→receipt at the healthy subscriptions; those not received by
// the cutoff counted at it) and failing attempts by the cutoff.
func (h *harness) burstRow(flood noisyWindow, a *noisyWS) row {
	p := flood.burst
	p.mu.Lock()
	sent := make(map[string]time.Time, len(p.sent))
	for id, t0 := range p.sent {
		sent[id] = t0
	}
	p.mu.Unlock()
	var want []expected
	for _, e := range a.healthy {
		for id, t0 := range sent {
			want = append(want, expected{ep: e, id: id, sent: t0})
		}
	}
	d, miss := waits(want, flood.cutoff)
	l := summarize(d)
	failed := 0
	for _, e := range a.failing {
		_, n := e.counts(sent)
		failed += n
	}
	took := p.end.Sub(p.begin)
	al := summarize(p.accept)
	return row{id: "9c", name: fmt.Sprintf("noisy neighbour, A's burst: %d events from %d clients to %d subscriptions, %d answering 500 (latency: publish→receipt at the healthy ones)",
		h.sc.noisyBurst, publishers, len(a.healthy)+len(a.failing), len(a.failing)),
		throughput: fmt.Sprintf("%d accepted in %v (%.0f/s, accept p99 %s); by the cutoff %d of %d healthy deliveries (the rest counted at it), %d failed attempts",
			len(sent), took.Round(10*time.Millisecond), float64(len(sent))/took.Seconds(), ms(al.p99), len(want)-miss, len(want), failed),
		lat: &l}
}

// receivedText is a paced window's throughput cell.
func receivedText(n, missing int, p *publication) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d published, %d received by the cutoff", n, n-missing)
	if missing > 0 {
		fmt.Fprintf(&b, " (%d counted at it)", missing)
	}
	if r := p.refused.Load(); r > 0 {
		fmt.Fprintf(&b, "; %d refused", r)
	}
	return b.String()
}

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
	la := h.bAloneRow("9a", fmt.Sprintf("noisy neighbour, B alone: %g events/s to 1 subscription for %v, a test event and a redelivery every %v", noisyRate, dur, probeEvery), alone)

	r, lf, missFlood := bRow("9b", "noisy neighbour, B during A's burst (9c), the same load as 9a", flood)
	ratio, known := vsAlone(&r, lf, missFlood, la, "9a")
	r.checks = []check{{fmt.Sprintf("p99 ≤ %g × 9a", noisyP99Ratio), known && ratio <= noisyP99Ratio}}
	h.add(r)

	h.add(h.burstRow("9c", fmt.Sprintf("noisy neighbour, A's burst: %d events from %d clients to %d subscriptions, %d answering 500 (latency: publish→receipt at the healthy ones)",
		h.sc.noisyBurst, publishers, len(a.healthy)+len(a.failing), len(a.failing)), flood, a))
	h.noteWaits("9a", alone, false)
	h.noteWaits("9b", flood, false)
	h.probeRows([4]string{"9d", "9e", "9f", "9g"}, func(ws, what string) string {
		return fmt.Sprintf("noisy neighbour, %s's %s during the burst, request→receipt", ws, what)
	}, flood, &alone, "9a")
	h.noteRefusals("9", alone, flood)
}

// bAloneRow adds B's row of its window alone and returns its latencies.
func (h *harness) bAloneRow(id, name string, alone noisyWindow) lat {
	r, l, _ := bRow(id, name, alone)
	h.add(r)
	return l
}

// bRow is B's row of a window (publish→receipt of its events, those not
// received by the cutoff counted at it), its latencies and how many were
// so counted.
func bRow(id, name string, w noisyWindow) (row, lat, int) {
	d, miss := waits(w.b, w.cutoff)
	l := summarize(d)
	return row{id: id, name: name, throughput: receivedText(len(w.b), miss, w.bPub), lat: &l, use: &w.use}, l, miss
}

// vsAlone sets r.vs to B's p99 and p50 against B alone's (row aloneID)
// and returns the p99 ratio; known is false when either is missing.
func vsAlone(r *row, l lat, missing int, alone lat, aloneID string) (ratio float64, known bool) {
	if alone.n == 0 || l.n == 0 || alone.p99 <= 0 {
		return 0, false
	}
	ratio = float64(l.p99) / float64(alone.p99)
	// Waits counted at the cutoff are lower bounds, and so is the ratio.
	atLeast := ""
	if missing > 0 {
		atLeast = "≥ "
	}
	r.vs = fmt.Sprintf("p99 %s%s × %s's (p50 %s%s ×)", atLeast, num(ratio), aloneID, atLeast, num(float64(l.p50)/float64(alone.p50)))
	return ratio, true
}

// noteWaits notes where B's events waited in window id: publish→dispatched,
// with record publish→their first attempt's record, and on the stack
// where the window's starts waited inside Temporal's server.
func (h *harness) noteWaits(id string, w noisyWindow, record bool) {
	at := func(n int, what string) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf(" (%d %s at the cutoff, counted at it)", n, what)
	}
	if d := w.dispatch; d.n > 0 {
		h.notef("%s: B's publish→dispatched (the outbox relay marks a claimed batch dispatched once its workflow starts returned; with eager start, attempt 1 may already be made): p50 %s, p99 %s, max %s%s",
			id, ms(d.p50), ms(d.p99), ms(d.max), at(w.undispatched, "undispatched"))
	}
	if d := w.record; record && d.n > 0 {
		h.notef("%s: B's publish→first attempt's record (webhook_deliveries.date_created: when attempt 1 began): p50 %s, p99 %s, max %s%s",
			id, ms(d.p50), ms(d.p99), ms(d.max), at(w.unrecorded, "without one"))
	}
	h.noteServerWaits(id, w)
}

// probeRows adds the rows of both workspaces' test events and
// redeliveries in window w (ids: A's and B's test events, then A's and
// B's redeliveries), each against its window alone when there is one.
func (h *harness) probeRows(ids [4]string, name func(ws, what string) string, w noisyWindow, alone *noisyWindow, aloneID string) {
	for i, k := range []struct {
		what, ws string
		pick     func(probeSet) []expected
	}{
		{"test events", "A", func(p probeSet) []expected { return p.tests }},
		{"test events", "B", func(p probeSet) []expected { return p.tests }},
		{"redeliveries", "A", func(p probeSet) []expected { return p.redeliv }},
		{"redeliveries", "B", func(p probeSet) []expected { return p.redeliv }},
	} {
		p := w.probes[k.ws]
		d, miss := waits(k.pick(p), w.cutoff)
		l := summarize(d)
		r := row{id: ids[i], name: name(k.ws, k.what),
			throughput: fmt.Sprintf("%d sent, %d received; POSTs answered in p99 %s", len(d), len(d)-miss, ms(summarize(p.answers).p99)),
			lat:        &l,
			checks:     []check{{"p99 ≤ " + ms(probeP99), l.n > 0 && l.p99 <= probeP99}}}
		if miss > 0 {
			r.throughput += fmt.Sprintf("; %d not received by the cutoff, counted at it", miss)
		}
		if alone != nil {
			if base, ok := alone.probes[k.ws]; ok {
				bd, bmiss := waits(k.pick(base), alone.cutoff)
				bl := summarize(bd)
				r.vs = fmt.Sprintf("alone (%s): p50 %s, p99 %s of %d", aloneID, ms(bl.p50), ms(bl.p99), bl.n)
				if bmiss > 0 {
					r.vs += fmt.Sprintf(", %d missing", bmiss)
				}
			}
		}
		h.add(r)
	}
}

// noteRefusals notes the requests of scenario id's windows the API
// refused: probes, B's publishes, A's.
func (h *harness) noteRefusals(id string, windows ...noisyWindow) {
	for _, w := range windows {
		for ws, ps := range w.probes {
			if len(ps.refused) > 0 {
				h.notef("%s: %s's test events and redeliveries: %d refused (counted as not received), e.g. %s", id, ws, len(ps.refused), ps.refused[0])
			}
		}
		if n := w.bPub.refused.Load(); n > 0 {
			h.notef("%s: B: %d publishes refused, e.g. %s", id, n, w.bPub.refusal())
		}
		if w.aPub != nil {
			if n := w.aPub.refused.Load(); n > 0 {
				h.notef("%s: A: %d publishes refused, e.g. %s", id, n, w.aPub.refusal())
			}
		}
	}
}

// burstRow is A's row (id, name) of a window where A publishes as fast
// as it may: how fast it was accepted, and its deliveries (publish→receipt
// at the healthy subscriptions; those not received by the cutoff counted
// at it) and failing attempts by the cutoff.
func (h *harness) burstRow(id, name string, flood noisyWindow, a *noisyWS) row {
	p := flood.aPub
	sent := p.sentCopy()
	var want []expected
	for _, e := range a.healthy {
		for ev, t0 := range sent {
			want = append(want, expected{ep: e, id: ev, sent: t0})
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
	return row{id: id, name: name,
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

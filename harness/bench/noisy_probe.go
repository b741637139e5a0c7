package bench

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/receiver"
)

// trackedEndpoint is a receiver endpoint answering one status that notes
// when each verified request arrived, by webhook-id. A redelivery carries
// its event's id again, so its receipt is the first arrival after its
// request, which the receiver's first-2xx time cannot tell.
type trackedEndpoint struct {
	*receiver.Endpoint
	subID string

	mu sync.Mutex
	at map[string][]time.Time
}

func (h *harness) trackedEndpoint(status int) *trackedEndpoint {
	return h.trackedEndpointAnswering(func(w http.ResponseWriter, _ *http.Request) int {
		w.WriteHeader(status)
		return status
	})
}

// trackedEndpointAnswering notes each request's arrival, then answers it
// with answer (which returns the status written, 0 for none).
func (h *harness) trackedEndpointAnswering(answer func(http.ResponseWriter, *http.Request) int) *trackedEndpoint {
	t := &trackedEndpoint{at: map[string][]time.Time{}}
	t.Endpoint = h.rc.EndpointAnswering(func(w http.ResponseWriter, r *http.Request, _ int) int {
		now := time.Now()
		id := r.Header.Get("webhook-id")
		t.mu.Lock()
		t.at[id] = append(t.at[id], now)
		t.mu.Unlock()
		return answer(w, r)
	})
	return t
}

// firstAfter is the first arrival of event id at or after t0.
func (t *trackedEndpoint) firstAfter(id string, t0 time.Time) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, at := range t.at[id] {
		if !at.Before(t0) {
			return at, true
		}
	}
	return time.Time{}, false
}

// counts returns how many of the given events arrived at least once, and
// how many requests they made in all.
func (t *trackedEndpoint) counts(ids map[string]time.Time) (events, requests int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range ids {
		if n := len(t.at[id]); n > 0 {
			events++
			requests += n
		}
	}
	return events, requests
}

// expected is one receipt the harness waits for: event id at ep, sent at
// sent. An empty id (a request the API refused) is never received.
type expected struct {
	ep   *trackedEndpoint
	id   string
	sent time.Time
}

// waits is request→receipt of each expected receipt. One not received by
// cutoff counts as cutoff−sent, a lower bound of its wait, so it is never
// dropped; missing says how many so counted.
func waits(want []expected, cutoff time.Time) (d []time.Duration, missing int) {
	for _, w := range want {
		at, ok := time.Time{}, false
		if w.id != "" {
			at, ok = w.ep.firstAfter(w.id, w.sent)
		}
		if !ok || at.After(cutoff) {
			missing++
			at = cutoff
		}
		d = append(d, at.Sub(w.sent))
	}
	return d, missing
}

// allReceived reports whether every expected receipt has arrived.
func allReceived(want []expected) bool {
	for _, w := range want {
		if w.id == "" {
			continue // refused: nothing to wait for
		}
		if _, ok := w.ep.firstAfter(w.id, w.sent); !ok {
			return false
		}
	}
	return true
}

// probes are one workspace's test events and redeliveries.
type probes struct {
	c       *apiClient
	healthy []*trackedEndpoint // subscriptions a test event or redelivery goes to
	earlier []string           // events already received at every healthy endpoint
	next    int                // the next (endpoint, earlier event) pair to redeliver

	mu             sync.Mutex
	tests, redeliv []expected
	answers        []time.Duration // the POSTs' own time
	refused        []string
}

// run sends, every probeEvery from now until end, one test event and one
// redelivery, each to a healthy subscription. A redelivery is of a pair
// not redelivered before, so its receipt cannot be another's.
func (p *probes) run(ctx context.Context, end time.Time) {
	var wg sync.WaitGroup
	for t := time.Now(); t.Before(end) && ctx.Err() == nil; t = t.Add(probeEvery) {
		time.Sleep(time.Until(t))
		k := p.next
		p.next++
		ep := p.healthy[k%len(p.healthy)]
		wg.Go(func() { p.send(ctx, &p.tests, ep, func() (string, error) { return p.c.sendTest(ctx, ep.subID) }) })
		if k/len(p.healthy) >= len(p.earlier) {
			// Sized not to happen; counted missing if it does.
			p.send(ctx, &p.redeliv, ep, func() (string, error) { return "", errors.New("no earlier event left to redeliver") })
			continue
		}
		ev := p.earlier[k/len(p.healthy)]
		wg.Go(func() {
			p.send(ctx, &p.redeliv, ep, func() (string, error) { return ev, p.c.redeliver(ctx, ep.subID, ev) })
		})
	}
	wg.Wait()
}

// send makes one request and notes the receipt it expects (none if refused).
func (p *probes) send(ctx context.Context, to *[]expected, ep *trackedEndpoint, do func() (string, error)) {
	t0 := time.Now()
	id, err := do()
	took := time.Since(t0)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers = append(p.answers, took)
	if err != nil {
		id = ""
		if ctx.Err() == nil {
			p.refused = append(p.refused, err.Error())
		}
	}
	*to = append(*to, expected{ep: ep, id: id, sent: t0})
}

// taken returns and forgets what was sent so far (one window's probes).
func (p *probes) taken() (tests, redeliv []expected, answers []time.Duration, refused []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tests, redeliv, answers, refused = p.tests, p.redeliv, p.answers, p.refused
	p.tests, p.redeliv, p.answers, p.refused = nil, nil, nil, nil
	return
}

// pending lists the probes sent so far, for waiting on them.
func (p *probes) pending() []expected {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(append([]expected(nil), p.tests...), p.redeliv...)
}

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// scenarioTemporalDown: Temporal is stopped while events are published
// (each must still be answered 202: the event row is its own outbox
// entry), the API is SIGKILLed and restarted, and Temporal is started
// again on its file-backed history. The worker's outbox sweeper must start
// every delivery.
func scenarioTemporalDown(t *testing.T, h *harness) tally {
	ctx := context.Background()
	c := h.workspace(t, "c-temporal-down")
	subs := h.subscribe(t, c, h.rc, expectDelivered, addEndpoint(h.rc, answerOK, 0))

	if _, err := h.st.Temporal.Terminate(time.Minute); err != nil {
		t.Fatal(err)
	}
	p := &publisher{c: c}
	begin := time.Now()
	p.burst(ctx, h.sc.tEvents, 16)
	h.notef(t, "%d events published with Temporal down in %v", h.sc.tEvents, time.Since(begin).Round(time.Millisecond))
	if r := p.refusals(); len(r) > 0 {
		h.failf(t, "%d of %d events not answered 202 while Temporal was down, e.g. %s", len(r), h.sc.tEvents, r[0])
	}
	if err := h.st.API.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := h.st.API.Start(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := h.st.Temporal.Start(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Log("API SIGKILLed and restarted; Temporal started again")
	return h.settle(t, subs, p.ids())
}

// scenarioPostgresDown: PostgreSQL is stopped while the worker attempts
// deliveries (a receiver holds them 2 s, so they are in flight) and while
// it plans new ones (published with the worker paused by SIGSTOP, which is
// resumed once PostgreSQL is down). During the outage the API must answer
// 503 in its JSON error shape with Retry-After, never 500 and never after
// more than 10 s. After PostgreSQL is back, every event must arrive.
func scenarioPostgresDown(t *testing.T, h *harness) tally {
	ctx := context.Background()
	c := h.workspace(t, "d-postgres-down")
	hold := addEndpoint(h.rc, answerSlow, 2*time.Second)
	subs := h.subscribe(t, c, h.rc, expectDelivered, hold)
	m := h.sc.pgEvents

	attempting := &publisher{c: c}
	attempting.burst(ctx, m, 8)
	deadline := time.Now().Add(time.Minute)
	for hold.InFlight() < int64(min(m, 10)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := h.st.Worker.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	planning := &publisher{c: c}
	planning.burst(ctx, m, 8)
	inFlight := hold.InFlight()
	if err := h.st.StopPostgres(); err != nil {
		_ = h.st.Worker.Signal(syscall.SIGCONT)
		t.Fatal(err)
	}
	if err := h.st.Worker.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	h.notef(t, "PostgreSQL stopped with %d requests held at the receiver (more attempts unrecorded) and %d events waiting for their delivery workflows", inFlight, m)

	probes := probeOutage(ctx, c, h.sc.pgOutage)
	if err := h.st.StartPostgres(ctx); err != nil {
		t.Fatal(err)
	}
	h.notef(t, "PostgreSQL started again after %v; API during the outage: %s", h.sc.pgOutage, probes.summary())
	for _, f := range probes.failures {
		h.failf(t, "API during the outage: %s", f)
	}
	if r := append(attempting.refusals(), planning.refusals()...); len(r) > 0 {
		h.failf(t, "%d events not accepted while PostgreSQL was up, e.g. %s", len(r), r[0])
	}
	if took, err := waitReady(c, 30*time.Second); err != nil {
		h.failf(t, "API after the outage: %v", err)
	} else {
		h.notef(t, "API /readyz answered 200 %v after PostgreSQL was back", took.Round(time.Millisecond))
	}
	if a := c.do(ctx, http.MethodGet, "/projects", nil); a.status != http.StatusOK {
		h.failf(t, "API after the outage: GET /v1/projects %d %s %v", a.status, a.body, a.err)
	}
	return h.settle(t, subs, append(attempting.ids(), planning.ids()...))
}

// waitReady polls the API's /readyz until it answers 200.
func waitReady(c *apiClient, within time.Duration) (time.Duration, error) {
	begin := time.Now()
	url := strings.TrimSuffix(c.Base, "/v1") + "/readyz"
	client := &http.Client{Timeout: 5 * time.Second}
	last := "no answer"
	for time.Since(begin) < within {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(begin), nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Since(begin), fmt.Errorf("/readyz not 200 within %v of PostgreSQL's restart (last: %s)", within, last)
}

// probeResults collects what the API answered while PostgreSQL was down.
type probeResults struct {
	mu       sync.Mutex
	count    map[string]int // "GET /v1/projects 503" → n
	failures []string
}

func (p *probeResults) add(what string, a answer, ok bool, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	status := fmt.Sprint(a.status)
	if a.err != nil {
		status = "no answer"
	}
	p.count[what+" "+status]++
	if !ok && len(p.failures) < 10 {
		p.failures = append(p.failures, fmt.Sprintf("%s: %s after %v: %s %.200s", what, status, a.elapsed.Round(time.Millisecond), why, a.body))
	}
}

func (p *probeResults) summary() string { return fmt.Sprint(p.count) }

// probeOutage calls the API once a second for d: an authenticated read,
// a publish and /readyz, each in its own goroutine so a hang is seen.
func probeOutage(ctx context.Context, c *apiClient, d time.Duration) *probeResults {
	res := &probeResults{count: map[string]int{}}
	pc := *c.Client
	pc.HTTP = &http.Client{Timeout: 15 * time.Second}
	probe := &apiClient{&pc}
	readyz := strings.TrimSuffix(c.Base, "/v1") + "/readyz"
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for time.Now().Before(end) {
		wg.Go(func() {
			a := probe.do(ctx, http.MethodGet, "/projects", nil)
			ok, why := unavailableShape(a)
			res.add("GET /v1/projects", a, ok, why)
		})
		wg.Go(func() {
			_, a := probe.publish(ctx, -1)
			ok, why := unavailableShape(a)
			res.add("POST /v1/.../events", a, ok, why)
		})
		wg.Go(func() {
			begin := time.Now()
			resp, err := probe.HTTP.Get(readyz)
			a := answer{err: err, elapsed: time.Since(begin)}
			if err == nil {
				a.status = resp.StatusCode
				resp.Body.Close()
			}
			ok := err == nil && a.status == http.StatusServiceUnavailable && a.elapsed <= 10*time.Second
			res.add("GET /readyz", a, ok, "want 503 within 10s")
		})
		time.Sleep(time.Second)
	}
	wg.Wait()
	return res
}

// unavailableShape checks a 503 in the error contract: JSON
// {"error":{"code","message","requestId"}}, Retry-After, within 10 s.
func unavailableShape(a answer) (bool, string) {
	if a.err != nil {
		return false, a.err.Error()
	}
	if a.elapsed > 10*time.Second {
		return false, "answered after more than 10s"
	}
	if a.status != http.StatusServiceUnavailable {
		return false, "want 503"
	}
	if a.header.Get("Retry-After") == "" {
		return false, "503 without Retry-After"
	}
	var body struct {
		Error struct{ Code, Message, RequestID string }
	}
	if err := json.Unmarshal(a.body, &body); err != nil || body.Error.Code == "" || body.Error.Message == "" || body.Error.RequestID == "" {
		return false, "503 not in the JSON error shape"
	}
	return true, ""
}

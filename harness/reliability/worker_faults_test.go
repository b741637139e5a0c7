package reliability

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// scenarioWorkerKill: a burst to two subscriptions (one slow, one failing
// each event's first request with 500) while the worker is SIGKILLed twice
// at random moments and restarted each time. Attempts the kills cut short
// are retried by Temporal once their start-to-close timeout passes, so
// receivers may get duplicates; nothing may be lost.
func scenarioWorkerKill(t *testing.T, h *harness) tally {
	ctx := context.Background()
	c := h.workspace(t, "a-worker-sigkill")
	subs := h.subscribe(t, c, h.rc, expectDelivered,
		addEndpoint(h.rc, answerSlow, 300*time.Millisecond), addEndpoint(h.rc, answerFailFirst, 0))

	n := h.sc.burst
	p := &publisher{c: c}
	done := make(chan struct{})
	go func() { defer close(done); p.burst(ctx, n, 8) }()

	h.killDuring(t, h.st.Worker, p, n, done, [2]float64{0.15, 0.45}, [2]float64{0.55, 0.9})
	<-done
	if r := p.refusals(); len(r) > 0 {
		h.failf(t, "%d events not accepted, e.g. %s", len(r), r[0])
	}
	return h.settle(t, subs, p.ids())
}

// restart is one kill of killDuring: when the process was killed, and
// when it was ready again.
type restart struct{ killed, ready time.Time }

// killDuring SIGKILLs pr once per window, when a random share of the n
// events of the burst within that window has been sent, keeps it down for
// a random 0.5 to 3 s and starts it again. A window the burst ends (done)
// before reaching fails the scenario.
func (h *harness) killDuring(t *testing.T, pr *proc, p *publisher, n int, done <-chan struct{}, windows ...[2]float64) (restarts []restart) {
	t.Helper()
	for i, window := range windows {
		at := int(float64(n) * (window[0] + rand.Float64()*(window[1]-window[0])))
		for p.sent.Load() < int64(at) {
			select {
			case <-done:
				h.failf(t, "kill %d: the burst ended after %d of %d events sent, before the kill at %d", i+1, p.sent.Load(), n, at)
				return restarts
			case <-time.After(10 * time.Millisecond):
			}
		}
		if err := pr.Kill(); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		down := time.Duration(500+rand.IntN(2500)) * time.Millisecond
		time.Sleep(down)
		begin := time.Now()
		if err := pr.Start(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		restarts = append(restarts, restart{killed, time.Now()})
		h.notef(t, "kill %d: %s SIGKILLed after %d of %d events sent; started again %v later, ready in %v",
			i+1, pr.Name, at, n, down, time.Since(begin).Round(time.Millisecond))
	}
	return restarts
}

// scenarioWorkerTerm: the worker is asked to stop (SIGTERM) while a
// receiver holds 20 attempts for 5 seconds each, then started again. With
// a graceful shutdown (SHUTDOWN_TIMEOUT=30s) the attempts finish and are
// recorded before the worker exits, so no receiver sees a request twice.
func scenarioWorkerTerm(t *testing.T, h *harness) tally {
	ctx := context.Background()
	c := h.workspace(t, "b-worker-sigterm")
	hold := addEndpoint(h.rc, answerSlow, 5*time.Second)
	subs := h.subscribe(t, c, h.rc, expectDelivered, hold)

	n := h.sc.inFlight
	p := &publisher{c: c}
	p.burst(ctx, n, n)
	if r := p.refusals(); len(r) > 0 {
		h.failf(t, "%d events not accepted, e.g. %s", len(r), r[0])
	}
	deadline := time.Now().Add(time.Minute)
	for hold.InFlight() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	held := hold.InFlight()
	if held < int64(n) {
		// Stopping an idle worker would test nothing.
		h.failf(t, "only %d of %d attempts in flight after a minute", held, n)
	}
	took, err := h.st.Worker.Terminate(shutdownTimeout + 10*time.Second)
	if err != nil && !errors.Is(err, errStillRunning) {
		t.Fatal(err)
	}
	h.notef(t, "worker SIGTERMed with %d attempts in flight; it exited after %v (%v); %d still in flight at the receiver",
		held, took.Round(time.Millisecond), h.st.Worker.ExitErr(), hold.InFlight())
	if err != nil {
		h.failf(t, "worker did not exit within SHUTDOWN_TIMEOUT: %v", err)
	}
	if err := h.st.Worker.Start(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	res := h.settle(t, subs, p.ids())
	if res.duplicates != 0 {
		h.failf(t, "%d duplicate receipts after SIGTERM with %d attempts in flight, want 0; the worker exited %v after SIGTERM, "+
			"so the attempts were cut short and sent again", res.duplicates, held, took.Round(time.Millisecond))
	}
	return res
}

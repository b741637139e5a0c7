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

	// Each kill happens once a random share of the burst has been sent.
	for i, window := range [][2]float64{{0.15, 0.45}, {0.55, 0.9}} {
		at := int(float64(n) * (window[0] + rand.Float64()*(window[1]-window[0])))
		for p.sent.Load() < int64(at) {
			time.Sleep(10 * time.Millisecond)
		}
		if err := h.st.Worker.Kill(); err != nil {
			t.Fatal(err)
		}
		down := time.Duration(500+rand.IntN(2500)) * time.Millisecond
		h.notef(t, "kill %d: worker SIGKILLed after %d of %d events sent; restarted %v later", i+1, at, n, down)
		time.Sleep(down)
		if err := h.st.Worker.Start(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if r := p.refusals(); len(r) > 0 {
		h.failf(t, "%d events not accepted, e.g. %s", len(r), r[0])
	}
	return h.settle(t, subs, p.ids())
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
		h.notef(t, "only %d of %d attempts in flight after a minute; stopping the worker anyway", held, n)
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

package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// Scenarios 10 and 11: two more neighbours of workspace B, whose load is
// scenario 9's (noisyRate events/s to one healthy subscription, a test
// event and a redelivery every probeEvery from each workspace). In 10, A
// floods at the API's default event rate limit to ten subscriptions, five
// failing every attempt; in 11, A publishes only slowRate events/s, to ten
// subscriptions that answer past the service's response timeout. B alone,
// the baseline of both, is measured once in the run, by whichever runs
// first. Both retire A before returning (neighbours_stack.go), as 9 does;
// 10's flood, too large to retire within a bound on two cores, runs last.

const (
	neighbourP99   = time.Second // B's p99 during either neighbour, at most this
	neighbourRatio = 2.0         // 11: B's p99, at most this × B alone
	floodHealthy   = 5           // 10: A's subscriptions answering 204 ...
	floodFailing   = 5           // ... and those answering 500 to every attempt
	// floodSchedule is the retry schedule for 10. The stack's
	// workers run compose's (5s,5m,30m) and are restarted with this one
	// for 10 only (restartWorkers): for the whole stack it would change
	// other scenarios' meaning (4's stalling and 9's failing subscriptions
	// would be retried three times within seconds instead of once).
	floodSchedule = "2s,5s,10s"
	slowSubs      = 10
	slowRate      = 10.0             // 11: A's events per second
	slowAnswer    = 12 * time.Second // past the service's 10 s response timeout
)

// slowType is the event type of A's load in 11; A's probes go to a
// subscription of eventType, which that load does not reach.
var slowType = string(models.EventTestUpdated)

// neighbourB is workspace B of scenarios 10 and 11 and its window alone.
type neighbourB struct {
	ws      *noisyWS
	alone   noisyWindow
	aloneID string // the row that shows it: 10a, or 11a when 10 did not run
	aloneL  lat
}

// neighbourSpec is the windows' length and settle bound of 10 and 11.
func (h *harness) neighbourSpec() windowSpec {
	return windowSpec{h.sc.neighbourDur, h.sc.neighbourSettle}
}

// perWindow is how many probes of each kind a workspace sends in a window.
func (h *harness) perWindow() int {
	return int(math.Ceil(h.sc.neighbourDur.Seconds() / probeEvery.Seconds()))
}

// neighbourBase is B and its window alone, measured (and its row added as
// id+"a") the first time scenario id asks.
func (h *harness) neighbourBase(ctx context.Context, id string) (*neighbourB, error) {
	if h.neighbour != nil {
		return h.neighbour, nil
	}
	b, err := h.noisyWorkspace(ctx, "bench-neighbours-B", 1, 0)
	if err != nil {
		return nil, err
	}
	// B redelivers in its window alone and in 10's and 11's.
	if err := h.earlierEvents(ctx, b, 3*h.perWindow()); err != nil {
		return nil, err
	}
	h.logf("   B alone for %v", h.sc.neighbourDur)
	nb := &neighbourB{ws: b, aloneID: id + "a"}
	nb.alone = h.noisyRun(ctx, h.neighbourSpec(), b, nil, nil)
	nb.aloneL = h.bAloneRow(nb.aloneID, fmt.Sprintf("neighbours (10, 11), B alone: %g events/s to 1 subscription for %v, a test event and a redelivery every %v",
		noisyRate, h.sc.neighbourDur.Round(time.Second), probeEvery), nb.alone)
	h.noteWaits(nb.aloneID, nb.alone, true)
	h.noteRefusals(nb.aloneID, nb.alone)
	h.neighbour = nb
	return nb, nil
}

// scenario10 is the flood: A's publishers on one key as fast as the
// default RATE_LIMIT_EVENTS allows, to ten subscriptions, five failing.
func (h *harness) scenario10(ctx context.Context) error {
	nb, err := h.neighbourBase(ctx, "10")
	if err != nil {
		return err
	}
	a, err := h.noisyWorkspace(ctx, "bench-10-A", floodHealthy, floodFailing)
	if err != nil {
		return err
	}
	// Whatever happens, A's subscriptions go, then the workers get the
	// stack's schedule back (before A's backlog is waited on, so that the
	// restart does not land in the next scenario).
	defer h.retire(ctx, "10", a, nil, func() {
		if err := h.restartWorkers(ctx, ""); err != nil {
			h.notef("10: restoring the workers' retry schedule: %v", err)
		}
	})
	if err := h.restartWorkers(ctx, floodSchedule); err != nil {
		return err
	}
	// Also the restarted workers' warm-up: A's first events wait for them.
	if err := h.earlierEvents(ctx, a, h.perWindow()); err != nil {
		return err
	}
	// The bench stack runs with RATE_LIMIT_EVENTS=off, so the default
	// bucket is emulated here, one for the key, shared by its publishers.
	def := config.Defaults().RateLimitEvents
	lim := rate.NewLimiter(rate.Limit(def.Rate), def.Burst)
	flood := func(ctx context.Context, end time.Time) *publication {
		return publishLimited(ctx, a.c, publishers, lim, end)
	}
	h.logf("   B during A's flood at %s, for %v", def, h.sc.neighbourDur)
	w := h.noisyRun(ctx, h.neighbourSpec(), nb.ws, a, flood)
	h.floodRows(nb, w, a, def)
	return nil
}

// scenario11 is the slow neighbour: A publishes slowRate events/s to ten
// subscriptions that answer after slowAnswer.
func (h *harness) scenario11(ctx context.Context) error {
	nb, err := h.neighbourBase(ctx, "11")
	if err != nil {
		return err
	}
	// One healthy subscription of eventType for A's probes; the slow ones
	// take slowType, which only A's load publishes.
	a, err := h.noisyWorkspace(ctx, "bench-11-A", 1, 0)
	if err != nil {
		return err
	}
	slowC := a.c.withType(slowType)
	slow := make([]*trackedEndpoint, slowSubs)
	for i := range slow {
		slow[i] = h.trackedEndpointAnswering(slowAnswerFunc)
	}
	defer h.retire(ctx, "11", a, slow, nil)
	if err := subscribeTracked(ctx, slowC, slow); err != nil {
		return err
	}
	if err := h.earlierEvents(ctx, a, h.perWindow()); err != nil {
		return err
	}
	load := func(ctx context.Context, end time.Time) *publication {
		return publishPaced(ctx, slowC, 4, slowRate, time.Until(end))
	}
	h.logf("   B during A's slow neighbour (%g events/s to %d subscriptions answering after %v), for %v", slowRate, slowSubs, slowAnswer, h.sc.neighbourDur)
	w := h.noisyRun(ctx, h.neighbourSpec(), nb.ws, a, load)
	h.slowRows(nb, w, a, slow)
	return nil
}

// slowAnswerFunc answers 204 after slowAnswer, or nothing once the
// service gave up on the request.
func slowAnswerFunc(w http.ResponseWriter, r *http.Request) int {
	select {
	case <-r.Context().Done():
		return 0
	case <-time.After(slowAnswer):
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent
	}
}

// subscribeTracked subscribes each endpoint with c's event type.
func subscribeTracked(ctx context.Context, c *apiClient, eps []*trackedEndpoint) error {
	for _, e := range eps {
		id, secret, err := c.subscribe(ctx, e.URL())
		if err != nil {
			return err
		}
		if err := e.Trust(secret); err != nil {
			return err
		}
		e.subID = id
	}
	return nil
}

// publishLimited has n clients publish back to back until end, each
// publish first taking a token of lim (shared by the n).
func publishLimited(ctx context.Context, c *apiClient, n int, lim *rate.Limiter, end time.Time) *publication {
	p := newPublication()
	// Wait gives up once the next token would come after end.
	wctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	var seq atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for lim.Wait(wctx) == nil {
				p.publishOne(ctx, c, int(seq.Add(1)))
			}
		})
	}
	wg.Wait()
	return p
}

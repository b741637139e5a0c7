package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/harness/seed"
	"github.com/openlayer-ai/workspace-service/internal/secret"
)

// baselineT: the stack's Temporal server running the one-activity
// workflow from 16 concurrent clients (the worker in this process).
func (h *harness) baselineT(ctx context.Context) error {
	m := startMeter(h.st)
	res, err := devtemporal.RunOneActivityWorkflows(ctx, h.st.TC, devtemporal.OneActivityOptions{
		TaskQueue: "bench-baseline-t", Concurrency: publishers, Duration: h.sc.tDur,
	})
	u := m.end()
	if err != nil {
		return err
	}
	h.t = res.PerSecond()
	if res.Completed > 0 {
		h.tTemporalMs = u.temporalCPU() * 1000 / float64(res.Completed)
	}
	l := summarize(res.Latencies)
	h.add(row{id: "T", baseline: true, name: "baseline: one-activity workflow on the same Temporal, 16 clients",
		throughput: fmt.Sprintf("%.1f workflows/s", h.t), lat: &l, use: &u, deliveries: res.Completed,
		vs: fmt.Sprintf("Temporal %.2f CPU ms/workflow", h.tTemporalMs)})
	return nil
}

// baselineH: the receiver fed by the worker's own HTTP client (same
// transport settings) from 16 goroutines, signed 400-byte bodies. A failed
// request aborts it.
func (h *harness) baselineH(ctx context.Context) error {
	e := h.rc.Endpoint(false)
	whsec, err := secret.NewWebhookSecret()
	if err != nil {
		return err
	}
	if err := e.Trust(whsec); err != nil {
		return err
	}
	key, err := secret.WebhookSigningKey(whsec)
	if err != nil {
		return err
	}
	client := activities.NewWebhookClient(true)
	if tr, ok := client.Transport.(*http.Transport); ok {
		tr.TLSClientConfig.RootCAs = h.rc.Pool()
	}
	body := bytes.Repeat([]byte("x"), 400)
	url := e.URL()
	var seq atomic.Int64
	post := func(ctx context.Context) error {
		id := "msg_" + strconv.FormatInt(seq.Add(1), 10)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		now := time.Now()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", secret.SignWebhook(key, id, now, body))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("the receiver answered %d", resp.StatusCode)
		}
		return nil
	}
	rate, l, u, err := h.closedLoop(ctx, publishers, h.sc.hDur, post)
	if err != nil {
		return fmt.Errorf("baseline H: %w", err)
	}
	h.hps = rate
	h.add(row{id: "H", baseline: true, name: "baseline: the same HTTPS receiver, the worker's HTTP client, 16 goroutines, signed 400-byte bodies",
		throughput: fmt.Sprintf("%.0f requests/s", h.hps), lat: &l, use: &u})
	return nil
}

// saturated runs scenarios 1 and 2: subs subscriptions per event, 16
// publishers as fast as the API accepts, while at most backlog events
// are accepted and not yet delivered everywhere (so the backlog drains
// within the run's bounds). Deliveries/s is counted at the receiver over
// the window after a warm-up.
func (h *harness) saturated(ctx context.Context, id, name string, subs, backlog int, target float64) error {
	c, err := h.workspace(ctx, "bench-"+id)
	if err != nil {
		return err
	}
	eps, _, err := h.subscribe(ctx, c, subs, false)
	if err != nil {
		return err
	}
	p := newPublication()
	hold := func() bool {
		return int64(p.accepted())*int64(subs)-received(eps) > int64(backlog*subs)
	}
	m := startMeter(h.st)
	sm := startServerMeter(ctx, h.st.TemporalMetricsAddr)
	prof := h.startProfile(ctx, id, h.sc.satDur)
	begin := time.Now()
	end := begin.Add(h.sc.satDur)
	publishWhile(ctx, p, c, publishers, end, hold)
	u := m.end()
	if s, ok, err := sm.end(ctx); err != nil {
		h.notef("%s: reading Temporal's server metrics: %v", id, err)
	} else if ok {
		h.notef("%s: %s", id, h.serverText(s))
	}
	prof.end(ctx)
	inWindow := receiptsBetween(eps, begin, time.Now())
	warm := h.sc.satDur / 5
	window := receiptsBetween(eps, begin.Add(warm), end)
	perSec := float64(window) / (h.sc.satDur - warm).Seconds()
	accepted := p.accepted()
	if !waitDelivered(ctx, eps, int64(accepted*subs), h.sc.drain) {
		h.notef("%s: %d of %d deliveries within %v of the window's end", id, received(eps), accepted*subs, h.sc.drain)
	}
	h.noteDuplicates(id, eps)
	h.noteRefused(id, p)
	d, _ := deliveryLatencies(eps, p)
	l := summarize(d)
	ratio := perSec / h.t
	cost := h.costChecks(u, inWindow, subs)
	h.add(row{id: id, name: name,
		throughput: fmt.Sprintf("%.1f deliveries/s (%d events accepted)", perSec, accepted),
		lat:        &l, use: &u, deliveries: inWindow,
		vs:     fmt.Sprintf("%.2f × T; %s", ratio, cost.what),
		checks: append([]check{{fmt.Sprintf("≥ %g × T", target), ratio >= target}}, cost.checks...)})
	return nil
}

// Issue 22's targets for the service's own CPU (api + worker + its
// PostgreSQL) at saturation: a whole competing pipeline's cost.
const (
	ownMsPerEventOneSub    = 1.0 // 1 subscription, per event
	ownMsPerDeliveryTenSub = 0.7 // 10 subscriptions, per delivery
)

// costResult is the cost figures and targets of a saturated row.
type costResult struct {
	what   string
	checks []check
}

// costChecks compares a saturated window's CPU with issue 22's targets:
// the service's own share per event (1 subscription) or per delivery (10),
// and Temporal's share per event against its share per workflow of T.
func (h *harness) costChecks(u usage, deliveries, subs int) costResult {
	if deliveries <= 0 {
		return costResult{what: "no delivery in the window"}
	}
	events := float64(deliveries) / float64(subs)
	own := u.ownCPU() * 1000 / float64(deliveries)
	temporal := u.temporalCPU() * 1000 / events
	var r costResult
	if subs == 1 {
		r.what = fmt.Sprintf("own %.2f CPU ms/event", own)
		r.checks = append(r.checks, check{fmt.Sprintf("own ≤ %g ms/event", ownMsPerEventOneSub), own <= ownMsPerEventOneSub})
	} else {
		r.what = fmt.Sprintf("own %.2f CPU ms/delivery", own)
		r.checks = append(r.checks, check{fmt.Sprintf("own ≤ %g ms/delivery", ownMsPerDeliveryTenSub), own <= ownMsPerDeliveryTenSub})
	}
	r.what += fmt.Sprintf(", Temporal %.2f ms/event", temporal)
	if h.tTemporalMs > 0 {
		r.checks = append(r.checks, check{fmt.Sprintf("Temporal ≤ T's %.2f ms/workflow", h.tTemporalMs), temporal <= h.tTemporalMs})
	}
	return r
}

func (h *harness) scenario1(ctx context.Context) error {
	return h.saturated(ctx, "1", "1 subscription, 16 publishers as fast as accepted", 1, 320, 2.5)
}

func (h *harness) scenario2(ctx context.Context) error {
	return h.saturated(ctx, "2", "10 subscriptions per event, 16 publishers as fast as accepted", 10, 100, 20)
}

// pacedResult is what one paced run measured.
type pacedResult struct {
	lat       lat
	use       usage
	events    int // accepted
	delivered int // to healthy endpoints
	cpuPerEv  float64
	ids       []string
}

// paced publishes rate events/s for the paced duration to subs
// subscriptions (the last stalling when stall) and waits for every healthy
// delivery. CPU is the whole service's, from the first publish to the last
// healthy delivery.
func (h *harness) paced(ctx context.Context, id string, subs int, stall bool, rate float64) (pacedResult, error) {
	var r pacedResult
	c, err := h.workspace(ctx, "bench-"+id)
	if err != nil {
		return r, err
	}
	eps, subIDs, err := h.subscribe(ctx, c, subs, stall)
	if err != nil {
		return r, err
	}
	healthy := eps
	if stall {
		healthy = eps[:len(eps)-1]
	}
	m := startMeter(h.st)
	p := publishPaced(ctx, c, publishers, rate, h.sc.pacedDur)
	r.events = p.accepted()
	if !waitDelivered(ctx, healthy, int64(r.events*len(healthy)), 30*time.Second) {
		h.notef("%s: %d of %d healthy deliveries within 30 s of the last publish", id, received(healthy), r.events*len(healthy))
	}
	h.noteDuplicates(id, healthy)
	r.use = m.end()
	h.noteRefused(id, p)
	if stall {
		// Its attempts time out and would be retried later, into the next scenarios.
		if err := c.unsubscribe(ctx, subIDs[len(subIDs)-1]); err != nil {
			h.notef("%s: %v", id, err)
		}
	}
	d, _ := deliveryLatencies(healthy, p)
	r.delivered = len(d)
	r.lat = summarize(d)
	if r.events > 0 {
		r.cpuPerEv = r.use.totalCPU() * 1000 / float64(r.events)
	}
	p.mu.Lock()
	for ev := range p.sent {
		r.ids = append(r.ids, ev)
	}
	p.mu.Unlock()
	return r, nil
}

func (h *harness) scenario3(ctx context.Context) error {
	for _, c := range []struct {
		id         string
		subs       int
		rate       float64
		p50, p99   time.Duration // 0: no target
		cpuPerEvMs float64       // 0: no target
	}{
		{"3a", 1, 10, 30 * time.Millisecond, 60 * time.Millisecond, 20},
		{"3b", 1, 50, 0, 0, 0},
		{"3c", 10, 10, 0, 150 * time.Millisecond, 0},
	} {
		r, err := h.paced(ctx, c.id, c.subs, false, c.rate)
		if err != nil {
			return err
		}
		var checks []check
		if c.p50 > 0 {
			checks = append(checks, check{"p50 ≤ " + ms(c.p50), r.lat.n > 0 && r.lat.p50 <= c.p50})
		}
		if c.p99 > 0 {
			checks = append(checks, check{"p99 ≤ " + ms(c.p99), r.lat.n > 0 && r.lat.p99 <= c.p99})
		}
		if c.cpuPerEvMs > 0 {
			checks = append(checks, check{fmt.Sprintf("≤ %g CPU ms/event", c.cpuPerEvMs), r.cpuPerEv <= c.cpuPerEvMs})
		}
		if c.id == "3c" {
			h.p99Ten = r.lat.p99
		}
		if c.rate == 10 {
			h.costIDs[c.subs] = r.ids
		}
		h.add(row{id: c.id, name: fmt.Sprintf("paced %g events/s, %s", c.rate, plural(c.subs, "subscription")),
			throughput: fmt.Sprintf("%.1f deliveries/s offered (%d delivered)", c.rate*float64(c.subs), r.delivered),
			lat:        &r.lat, use: &r.use, deliveries: r.delivered,
			vs:     fmt.Sprintf("%.1f CPU ms/event (whole service)", r.cpuPerEv),
			checks: checks})
	}
	return nil
}

func (h *harness) scenario4(ctx context.Context) error {
	r, err := h.paced(ctx, "4", 10, true, 10)
	if err != nil {
		return err
	}
	row := row{id: "4", name: "10 events/s, 9 healthy subscriptions + 1 stalling until the attempt times out",
		throughput: fmt.Sprintf("%d healthy deliveries", r.delivered), lat: &r.lat, use: &r.use}
	if h.p99Ten > 0 && r.lat.n > 0 {
		moved := float64(r.lat.p99)/float64(h.p99Ten) - 1
		row.vs = fmt.Sprintf("healthy p99 %+.0f%% vs 3c", moved*100)
		row.checks = []check{{"p99 moves < 10%", moved < 0.10}}
	} else {
		row.vs = "3c not measured"
	}
	h.add(row)
	return nil
}

func (h *harness) scenario5(ctx context.Context) error {
	c, err := h.workspace(ctx, "bench-5")
	if err != nil {
		return err
	}
	eps, _, err := h.subscribe(ctx, c, 1, false)
	if err != nil {
		return err
	}
	m := startMeter(h.st)
	p := publishCount(ctx, c, publishers, h.sc.burst)
	acceptTook := p.end.Sub(p.begin)
	accepted := p.accepted()
	acceptUse := m.end()
	rate := float64(accepted) / acceptTook.Seconds()
	al := summarize(p.accept)
	ratio := rate / h.t
	h.noteRefused("5", p)
	h.add(row{id: "5a", name: fmt.Sprintf("burst of %d events from 16 clients: accepting", h.sc.burst),
		throughput: fmt.Sprintf("%.0f events accepted/s (%d in %v)", rate, accepted, acceptTook.Round(10*time.Millisecond)),
		lat:        &al, use: &acceptUse,
		vs:     fmt.Sprintf("%.2f × T", ratio),
		checks: []check{{"≥ 15 × T", ratio >= 15}, {"p99 accept < 50 ms", al.n > 0 && al.p99 < 50*time.Millisecond}}})

	m = startMeter(h.st)
	all := waitDelivered(ctx, eps, int64(accepted), h.sc.burstWait)
	u := m.end()
	h.noteDuplicates("5", eps)
	d, last := deliveryLatencies(eps, p)
	l := summarize(d)
	r := row{id: "5b", name: "burst: until the last delivery", lat: &l, use: &u, deliveries: len(d)}
	if all {
		took := last.Sub(p.begin)
		r.throughput = fmt.Sprintf("last delivery %.1f s after the first publish (%.0f deliveries/s)", took.Seconds(), float64(len(d))/took.Seconds())
	} else {
		r.throughput = fmt.Sprintf("%d of %d delivered within %v of the burst", len(d), accepted, h.sc.burstWait)
	}
	h.add(r)
	return nil
}

// scenario6 seeds 100,000 projects in a workspace, measures baseline Q
// (the page query straight on PostgreSQL at 32 clients), then GET
// /v1/projects?perPage=25 at 32 clients.
func (h *harness) scenario6(ctx context.Context) error {
	c, err := h.workspace(ctx, "bench-6")
	if err != nil {
		return err
	}
	t0 := time.Now()
	seedDB := openSeedDB(h.st.DBURL)
	defer seedDB.Close()
	wsID, err := uuid.Parse(c.ws.WorkspaceID)
	if err != nil {
		return err
	}
	if err := seed.Projects(ctx, seedDB, wsID, h.sc.projects); err != nil {
		return err
	}
	h.logf("   seeded %d projects in %v", h.sc.projects, time.Since(t0).Round(100*time.Millisecond))

	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(h.st.DBURL)))
	defer db.Close()
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	query := func(ctx context.Context) error {
		rows, err := db.QueryContext(ctx, seed.ProjectsPageQuery, c.ws.WorkspaceID)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(sql.RawBytes)
		}
		n := 0
		for rows.Next() {
			if err := rows.Scan(vals...); err != nil {
				return err
			}
			n++
		}
		if n != 25 {
			return fmt.Errorf("the page query returned %d rows", n)
		}
		return rows.Err()
	}
	qs, ql, qu, err := h.closedLoop(ctx, 32, h.sc.qDur, query)
	if err != nil {
		return fmt.Errorf("baseline Q: %w", err)
	}
	h.q = qs
	h.add(row{id: "Q", baseline: true, name: "baseline: the projects page query (25 rows, no count) on PostgreSQL, 32 clients",
		throughput: fmt.Sprintf("%.0f queries/s", qs), lat: &ql, use: &qu})

	var total atomic.Int64
	get := func(ctx context.Context) error {
		status, body, err := c.do(ctx, http.MethodGet, "/projects?perPage=25", nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET /v1/projects: %d %s", status, body)
		}
		if total.Load() == 0 {
			var page struct {
				Meta  struct{ TotalItems int64 } `json:"_meta"`
				Items []json.RawMessage
			}
			if err := json.Unmarshal(body, &page); err != nil {
				return err
			}
			if len(page.Items) != 25 {
				return fmt.Errorf("GET /v1/projects: %d items", len(page.Items))
			}
			total.Store(page.Meta.TotalItems)
		}
		return nil
	}
	rs, rl, ru, err := h.closedLoop(ctx, 32, h.sc.listDur, get)
	if err != nil {
		return err
	}
	if got := total.Load(); got != int64(h.sc.projects) {
		h.notef("6: totalItems was %d, the workspace holds %d projects", got, h.sc.projects)
	}
	ratio := rs / h.q
	h.add(row{id: "6", name: fmt.Sprintf("GET /v1/projects?perPage=25 over %d projects, 32 clients", h.sc.projects),
		throughput: fmt.Sprintf("%.1f requests/s", rs), lat: &rl, use: &ru,
		vs:     fmt.Sprintf("%.4f × Q", ratio),
		checks: []check{{"≥ 0.20 × Q", ratio >= 0.20}, {"p99 < 20 ms", rl.p99 < 20*time.Millisecond}}})
	return nil
}

// closedLoop runs op from n goroutines back to back for d and returns
// operations per second, their latencies and the processes' usage. The
// first error ends it.
func (h *harness) closedLoop(ctx context.Context, n int, d time.Duration, op func(context.Context) error) (float64, lat, usage, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		lats     []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	m := startMeter(h.st)
	begin := time.Now()
	end := begin.Add(d)
	for range n {
		wg.Go(func() {
			var mine []time.Duration
			for ctx.Err() == nil && time.Now().Before(end) {
				t0 := time.Now()
				if err := op(ctx); err != nil {
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					break
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	u := m.end()
	return float64(len(lats)) / elapsed.Seconds(), summarize(lats), u, firstErr
}

// scenario7 seeds delivery records for one subscription and reads page 1
// and page 1,000 (perPage 25), one request at a time.
func (h *harness) scenario7(ctx context.Context) error {
	c, err := h.workspace(ctx, "bench-7")
	if err != nil {
		return err
	}
	_, subIDs, err := h.subscribe(ctx, c, 1, false)
	if err != nil {
		return err
	}
	t0 := time.Now()
	seedDB := openSeedDB(h.st.DBURL)
	defer seedDB.Close()
	subID, err := uuid.Parse(subIDs[0])
	if err != nil {
		return err
	}
	if err := seed.Deliveries(ctx, seedDB, subID, h.sc.records); err != nil {
		return err
	}
	h.logf("   seeded %d delivery records in %v", h.sc.records, time.Since(t0).Round(100*time.Millisecond))
	var p50s []time.Duration
	for _, page := range []int{1, 1000} {
		path := c.WSPath(fmt.Sprintf("/webhooks/%s/deliveries?perPage=25&page=%d", subIDs[0], page))
		get := func(ctx context.Context) error {
			status, body, err := c.do(ctx, http.MethodGet, path, nil)
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("page %d: %d %s", page, status, body)
			}
			return nil
		}
		// One warm-up request, so both pages start with a warm cache.
		if err := get(ctx); err != nil {
			return err
		}
		rs, l, u, err := h.closedLoop(ctx, 1, h.sc.pageDur, get)
		if err != nil {
			return err
		}
		p50s = append(p50s, l.p50)
		r := row{id: fmt.Sprintf("7%c", 'a'+len(p50s)-1),
			name:       fmt.Sprintf("GET …/deliveries?perPage=25&page=%d over %d records, 1 client", page, h.sc.records),
			throughput: fmt.Sprintf("%.1f requests/s", rs), lat: &l, use: &u}
		if len(p50s) == 2 && p50s[0] > 0 {
			ratio := float64(p50s[1]) / float64(p50s[0])
			r.vs = fmt.Sprintf("p50 %.2f × page 1's", ratio)
			r.checks = []check{{"≤ 2 × page 1", ratio <= 2}}
		}
		h.add(r)
	}
	return nil
}

// scenario8 reads the histories of scenario 3a's and 3c's delivery
// workflows (paced, every first attempt succeeding) and counts history
// events and billable actions per delivered event.
func (h *harness) scenario8(ctx context.Context) error {
	for _, c := range []struct {
		id     string
		subs   int
		target float64 // actions per delivery
	}{{"8a", 1, 2}, {"8b", 10, 0.3}} {
		ids := h.costIDs[c.subs]
		if len(ids) == 0 {
			h.notef("%s: no events of scenario 3 to read", c.id)
			continue
		}
		ids = ids[:min(len(ids), h.sc.costSample)]
		var events, actions, n int
		for _, ev := range ids {
			cost, err := historyCost(ctx, h.st.TC, ev)
			if err != nil {
				return fmt.Errorf("history of %s: %w", ev, err)
			}
			if !cost.Closed {
				continue
			}
			n++
			events += cost.Events
			actions += cost.Actions
		}
		// A workflow still open is one still retrying: leaving it out biases
		// the cost low, so the row says how many it read and misses a check.
		r := row{id: c.id, name: fmt.Sprintf("Temporal cost, %s, %d closed of %d workflows of 3%c", plural(c.subs, "subscription"), n, len(ids), map[int]rune{1: 'a', 10: 'c'}[c.subs])}
		allClosed := check{fmt.Sprintf("all %d read closed", len(ids)), false}
		if n == 0 {
			r.throughput = "none closed"
			r.checks = []check{allClosed}
			h.add(r)
			continue
		}
		perEvent := float64(actions) / float64(n)
		perDelivery := perEvent / float64(c.subs)
		what := fmt.Sprintf("≤ %g actions/delivery", c.target)
		if c.subs == 1 {
			what = fmt.Sprintf("≤ %g actions/event", c.target)
		}
		r.throughput = fmt.Sprintf("%.1f history events/event; %.2f actions/event", float64(events)/float64(n), perEvent)
		r.vs = fmt.Sprintf("%.2f actions/delivery", perDelivery)
		r.checks = []check{{what, perDelivery <= c.target}}
		if n < len(ids) {
			r.vs += fmt.Sprintf(" (closed only: %d open left out)", len(ids)-n)
			r.checks = append(r.checks, allClosed)
		}
		h.add(r)
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Package bench is make bench: it builds and starts the service as real,
// separate processes (harness/procstack: a throwaway PostgreSQL cluster,
// devtemporal on a SQLite file, or Temporal's own server on PostgreSQL
// (Config.Topologies), the migrations, N api and M worker processes),
// serves an HTTPS receiver that verifies every Standard Webhooks signature
// from its own process (so the receiver competes with the stack for the
// same CPUs, and its CPU is not in the table), and runs each scenario of
// issue 10 for a bounded time. It prints one markdown table: throughput, latency (p50, p99, max),
// CPU seconds and peak resident memory of each process, and the ratio to
// the scenario's baseline measured in the same run (T: the same Temporal
// server running a one-activity workflow; H: the same receiver fed by a
// plain Go client; Q: the projects page query straight on PostgreSQL),
// with each target met or missed. A scenario that aborts fails the run
// (its row is missing) and keeps the run folder.
package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
	"github.com/openlayer-ai/workspace-service/harness/receiver"
)

// Config is what harness/cmd/bench passes.
type Config struct {
	Mode     string // "full" or "short"
	Bin      string // where the binaries are built (and reused)
	Prebuilt bool   // run the binaries already in Bin
	Out      string // the table is also written here (empty: not written)
	Keep     bool   // keep the run folder (logs, data) even when all went well
	Only     string // run only these scenarios (comma-separated ids or names, e.g. "1,6" or "noisy,flood,slow"); baselines always run
	// Topologies are the deployments measured, one after the other, each
	// with its own baselines and table: "dev" (devtemporal, the embedded
	// Temporal server on SQLite, as make dev runs it) and "stack" (make
	// stack's: Temporal's own server on a PostgreSQL cluster of its own,
	// procstack.Options.TemporalServer).
	Topologies []string
	// APIs and Workers are how many api and worker processes each
	// topology runs (procstack.Options'); publishes go to the APIs in
	// turn.
	APIs, Workers int
	// Profile, when set, is a folder that receives, for the saturated
	// scenarios (1 and 2), a CPU profile of every api and worker process
	// and the service's PostgreSQL statements by time (pg_stat_statements).
	Profile string
	Log     func(format string, args ...any)
}

// Topology names Config.Topologies takes.
const (
	TopologyDev   = "dev"
	TopologyStack = "stack"
)

// scale sizes the run.
type scale struct {
	tDur, hDur, qDur time.Duration // baselines
	satDur           time.Duration // scenarios 1 and 2: the publishing window
	pacedDur         time.Duration // each paced run of scenarios 3 and 4
	burst            int           // scenario 5: events in the burst
	burstWait        time.Duration // scenario 5: bound on waiting for the last delivery
	listDur          time.Duration // scenario 6
	projects         int           // scenario 6
	records          int           // scenario 7
	pageDur          time.Duration // scenario 7: each page
	drain            time.Duration // bound on waiting for a saturated run's backlog
	costSample       int           // scenario 8: histories read per subscription count
	noisyBurst       int           // scenario 9: A's burst
	noisyDur         time.Duration // scenario 9: each window (B alone, then B during A's burst)
	noisySettle      time.Duration // scenario 9: bound on waiting for receipts after a window
	neighbourDur     time.Duration // scenarios 10 and 11: each window (B alone once, then B beside each A)
	neighbourSettle  time.Duration // scenarios 10 and 11: bound on waiting for receipts after a window
	neighbourDrain   time.Duration // scenarios 10 and 11: bound on waiting for A's backlog once its subscriptions are gone
}

var scales = map[string]scale{
	"full": {tDur: 15 * time.Second, hDur: 10 * time.Second, qDur: 10 * time.Second,
		satDur: 20 * time.Second, pacedDur: 25 * time.Second, burst: 5000, burstWait: 3 * time.Minute,
		listDur: 15 * time.Second, projects: 100_000, records: 1_000_000, pageDur: 8 * time.Second,
		drain: 45 * time.Second, costSample: 100,
		noisyBurst: 5000, noisyDur: 60 * time.Second, noisySettle: 60 * time.Second,
		neighbourDur: 30 * time.Second, neighbourSettle: 40 * time.Second, neighbourDrain: 120 * time.Second},
	"short": {tDur: 6 * time.Second, hDur: 3 * time.Second, qDur: 3 * time.Second,
		satDur: 8 * time.Second, pacedDur: 8 * time.Second, burst: 500, burstWait: 45 * time.Second,
		listDur: 4 * time.Second, projects: 100_000, records: 100_000, pageDur: 2 * time.Second,
		drain: 15 * time.Second, costSample: 30,
		noisyBurst: 500, noisyDur: 15 * time.Second, noisySettle: 20 * time.Second,
		neighbourDur: 8 * time.Second, neighbourSettle: 10 * time.Second, neighbourDrain: 30 * time.Second},
}

// publishers is how many clients publish at once (the 16).
const publishers = 16

// harness is one run: the stack, the receiver, the rows so far.
type harness struct {
	cfg  Config
	topo string // TopologyDev or TopologyStack
	sc   scale
	st   *procstack.Stack
	rc   *receiver.Receiver
	logf func(format string, args ...any)

	rows  []row
	notes []string

	t, hps, q   float64 // baselines per second
	tTemporalMs float64 // baseline T: Temporal's CPU ms (server + its PostgreSQL) per workflow
	peakProcs   [nProcs]int
	// refused and duplicates total scenarios 1–5's refused publishes and
	// duplicate deliveries.
	refused, duplicates int64         // the most processes each tier ran at once
	p99Ten              time.Duration // scenario 3c: ten subscriptions at 10/s, the p99 scenario 4 is compared with
	costIDs             map[int][]string
	neighbour           *neighbourB                  // scenarios 10 and 11: B and its window alone, measured once
	workerEnv           [][]string                   // the workers' own environment, kept by restartWorkers
	baseEnv             map[*procstack.Proc][]string // each process's own environment, kept by restartService
}

// Run builds, then for each topology starts the stack, measures, prints
// its table and stops everything. The tables go to Config.Out together.
func Run(ctx context.Context, cfg Config) error {
	begin := time.Now()
	sc, ok := scales[cfg.Mode]
	if !ok {
		return fmt.Errorf("mode %q: want full or short", cfg.Mode)
	}
	if len(cfg.Topologies) == 0 {
		cfg.Topologies = []string{TopologyDev}
	}
	for _, t := range cfg.Topologies {
		if t != TopologyDev && t != TopologyStack {
			return fmt.Errorf("topology %q: want %s or %s", t, TopologyDev, TopologyStack)
		}
	}
	cfg.APIs, cfg.Workers = max(cfg.APIs, 1), max(cfg.Workers, 1)
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if !cfg.Prebuilt && cfg.Bin != "" {
		if err := build(ctx, cfg); err != nil {
			return err
		}
		cfg.Prebuilt = true
	}
	var tables []string
	var errs []error
	for _, topo := range cfg.Topologies {
		table, err := runTopology(ctx, cfg, sc, topo)
		if table != "" {
			fmt.Print("\n" + table)
			tables = append(tables, table)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", topo, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	if cfg.Out != "" && len(tables) > 0 {
		all := strings.Join(tables, "\n")
		if len(tables) > 1 {
			all += fmt.Sprintf("\nThe whole run (%s) took %v.\n", strings.Join(cfg.Topologies, " then "), time.Since(begin).Round(time.Second))
		}
		if err := os.MkdirAll(filepath.Dir(cfg.Out), 0o755); err == nil {
			if err := os.WriteFile(cfg.Out, []byte(all), 0o644); err != nil {
				return err
			}
			fmt.Printf("\n(table written to %s)\n", cfg.Out)
		}
	}
	return errors.Join(errs...)
}

// build builds every binary the topologies run into cfg.Bin.
func build(ctx context.Context, cfg Config) error {
	t0 := time.Now()
	cfg.Log("building %s into %s ...", strings.Join(binaries(cfg.Topologies), ", "), cfg.Bin)
	if err := procstack.BuildCommands(cfg.Bin, procstack.Binaries...); err != nil {
		return err
	}
	if slices.Contains(cfg.Topologies, TopologyStack) {
		if err := procstack.BuildServerBinaries(ctx, cfg.Bin); err != nil {
			return err
		}
	}
	cfg.Log("built in %v", time.Since(t0).Round(time.Second))
	return nil
}

func binaries(topologies []string) []string {
	out := slices.Clone(procstack.Binaries)
	if slices.Contains(topologies, TopologyStack) {
		out = append(out, slices.Sorted(maps.Keys(procstack.ServerBinaries))...)
	}
	return out
}

// runTopology starts one topology, runs the wanted scenarios and returns
// its table.
func runTopology(ctx context.Context, cfg Config, sc scale, topo string) (string, error) {
	begin := time.Now()
	logf := func(format string, args ...any) { cfg.Log("["+topo+"] "+format, args...) }
	h := &harness{cfg: cfg, topo: topo, sc: sc, logf: logf, costIDs: map[int][]string{}}

	dir, err := os.MkdirTemp("", "bench-"+topo+"-")
	if err != nil {
		return "", err
	}
	// The PostgreSQL server user must be able to traverse the run folder.
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	logf("run folder (logs, data): %s", dir)
	if cfg.Bin == "" {
		cfg.Bin = filepath.Join(dir, "bin")
		h.cfg.Bin = cfg.Bin
		if err := build(ctx, h.cfg); err != nil {
			return "", err
		}
	}

	h.rc = receiver.New()
	defer h.rc.Close()
	certFile := filepath.Join(dir, "receiver.pem")
	if err := h.rc.WritePEM(certFile); err != nil {
		return "", err
	}
	t0 := time.Now()
	h.st, err = procstack.Start(ctx, procstack.Options{
		Dir: dir, Bin: cfg.Bin, CertFile: certFile, TaskQueue: "bench", TemporalServer: topo == TopologyStack,
		APIs: cfg.APIs, Workers: cfg.Workers, Debug: cfg.Profile != "", PGSettings: h.pgSettings(),
		Env: []string{
			// One key publishes everything from one address.
			"RATE_LIMIT_READS=off", "RATE_LIMIT_WRITES=off", "RATE_LIMIT_EVENTS=off", "RATE_LIMIT_AUTH_FAILURES=off",
		},
	})
	failed := true
	defer func() {
		if h.st != nil {
			h.st.Stop()
		}
		if failed || cfg.Keep {
			fmt.Fprintf(os.Stderr, "bench: logs and data of %s kept in %s\n", topo, dir)
		} else {
			_ = os.RemoveAll(dir)
		}
	}()
	if err != nil {
		return "", fmt.Errorf("start the stack: %w (logs in %s)", err, dir)
	}
	logf("stack up in %v: %d api %v, %d worker, temporal %s, postgres :%d", time.Since(t0).Round(100*time.Millisecond),
		len(h.st.APIs), h.st.APIAddrs, len(h.st.Workers), h.st.TAddr, h.st.PGPort)

	steps := []struct {
		id  string
		run func(context.Context) error
	}{
		{"T", h.baselineT},
		{"H", h.baselineH},
		{"1", h.scenario1},
		{"2", h.scenario2},
		{"3", h.scenario3},
		{"4", h.scenario4},
		{"5", h.scenario5},
		{"6", h.scenario6}, // measures Q first, on the same seeded workspace
		{"7", h.scenario7},
		{"8", h.scenario8},
		{"12", h.scenario12}, // restarts the processes: after 8, which reads 3's workflows
		// The neighbours retire their A before returning (within a bound):
		// 10's flood, far beyond two cores, may outlast it, so it is last.
		{"11", h.scenario11},
		{"9", h.scenario9},
		{"10", h.scenario10},
	}
	var aborted []string
	for _, s := range steps {
		if !h.wanted(s.id) {
			continue
		}
		t0 := time.Now()
		logf("== %s", s.id)
		if err := s.run(ctx); err != nil {
			aborted = append(aborted, s.id)
			h.notef("%s: aborted: %v", s.id, err)
			logf("%s: %v", s.id, err)
			if ctx.Err() != nil {
				break
			}
		}
		logf("   %s took %v", s.id, time.Since(t0).Round(100*time.Millisecond))
	}
	if n, first := h.rc.Bad(); n > 0 {
		h.notef("the receiver refused %d requests (bad or missing signature), e.g. %s", n, first)
	}

	table := h.render(time.Since(begin))
	failed = bad(h.rc) > 0 || len(aborted) > 0
	switch {
	case len(aborted) > 0:
		return table, fmt.Errorf("scenarios aborted: %s (see the notes; logs in %s)", strings.Join(aborted, ", "), dir)
	case failed:
		return table, fmt.Errorf("the receiver refused %d requests (logs in %s)", bad(h.rc), dir)
	}
	return table, nil
}

// pgSettings are the service's PostgreSQL settings the run needs.
func (h *harness) pgSettings() []string {
	if h.cfg.Profile == "" {
		return nil
	}
	return pgProfileSettings
}

// wanted reports whether a step runs under cfg.Only; baselines always do.
func (h *harness) wanted(id string) bool {
	if h.cfg.Only == "" || id == "T" || id == "H" {
		return true
	}
	for _, o := range strings.Split(h.cfg.Only, ",") {
		o = strings.TrimSpace(o)
		if o == id || stepNames[o] == id {
			return true
		}
	}
	return false
}

// stepNames are the names --only also takes.
var stepNames = map[string]string{"noisy": "9", "flood": "10", "slow": "11", "tracing": "12"}

// notef keeps a note for below the table: one line, cut short.
func (h *harness) notef(format string, args ...any) {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	if len(msg) > 400 {
		msg = msg[:400] + "…"
	}
	h.notes = append(h.notes, msg)
}

// workspace bootstraps a workspace and returns a client with its admin key.
func (h *harness) workspace(ctx context.Context, name string) (*apiClient, error) {
	ws, err := h.st.Bootstrap(ctx, name)
	if err != nil {
		return nil, err
	}
	return newAPIClient(h.st.APIAddrs, ws), nil
}

// bad is how many requests the receiver refused.
func bad(rc *receiver.Receiver) int64 {
	n, _ := rc.Bad()
	return n
}

// subscribe adds n endpoints on the receiver (the last one stalling when
// stallLast) and a subscription for each.
func (h *harness) subscribe(ctx context.Context, c *apiClient, n int, stallLast bool) ([]*receiver.Endpoint, []string, error) {
	var eps []*receiver.Endpoint
	for i := range n {
		eps = append(eps, h.rc.Endpoint(stallLast && i == n-1))
	}
	ids, err := subscribeEndpoints(ctx, c, eps)
	if err != nil {
		return nil, nil, err
	}
	return eps, ids, nil
}

// subscribeEndpoints creates a subscription for each endpoint and has it
// verify with the subscription's secret.
func subscribeEndpoints(ctx context.Context, c *apiClient, eps []*receiver.Endpoint) ([]string, error) {
	var ids []string
	for _, e := range eps {
		id, secret, err := c.subscribe(ctx, e.URL())
		if err != nil {
			return nil, err
		}
		if err := e.Trust(secret); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// received counts the distinct events the endpoints answered 2xx (a
// duplicate delivery of an event does not count again).
func received(eps []*receiver.Endpoint) int64 {
	var n int64
	for _, e := range eps {
		d, _ := e.Counts()
		n += d
	}
	return n
}

// noteDuplicates notes the duplicate deliveries the endpoints answered 2xx,
// if any; they count in no figure of the table, only in the run's total.
func (h *harness) noteDuplicates(id string, eps []*receiver.Endpoint) {
	var n int64
	for _, e := range eps {
		_, d := e.Counts()
		n += d
	}
	h.duplicates += n
	if n > 0 {
		h.notef("%s: %d duplicate deliveries (an event delivered again to an endpoint that had answered 2xx), not counted", id, n)
	}
}

// noteRefused notes the publishes the API refused, if any, and counts
// them in the run's total.
func (h *harness) noteRefused(id string, p *publication) {
	n := p.refused.Load()
	h.refused += n
	if n > 0 {
		h.notef("%s: %d publishes refused, e.g. %s", id, n, p.refusal())
	}
}

// waitDelivered waits until the endpoints got want deliveries, or bound.
func waitDelivered(ctx context.Context, eps []*receiver.Endpoint, want int64, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for received(eps) < want {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// deliveryLatencies returns publish→receipt of every delivery of a
// published event, and the last receipt.
func deliveryLatencies(eps []*receiver.Endpoint, p *publication) ([]time.Duration, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	var last time.Time
	for _, e := range eps {
		for id, at := range e.Receipts() {
			t0, ok := p.sent[id]
			if !ok {
				continue
			}
			out = append(out, at.Sub(t0))
			if at.After(last) {
				last = at
			}
		}
	}
	return out, last
}

// receiptsBetween counts receipts at the endpoints within [from, to).
func receiptsBetween(eps []*receiver.Endpoint, from, to time.Time) int {
	n := 0
	for _, e := range eps {
		for _, at := range e.Receipts() {
			if !at.Before(from) && at.Before(to) {
				n++
			}
		}
	}
	return n
}

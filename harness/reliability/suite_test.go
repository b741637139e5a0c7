package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
	"github.com/openlayer-ai/workspace-service/harness/receiver"
)

// scale sizes the scenarios. "full" is what the brief of each scenario
// names; "short" keeps the whole suite under five minutes for CI.
type scale struct {
	burst         int           // a: events in the burst
	inFlight      int           // b: attempts held when the worker is stopped (at most the stack's WEBHOOK_MAX_IN_FLIGHT, 10)
	tEvents       int           // c: events published while Temporal is down
	pgEvents      int           // d: events per phase (attempting, planning)
	pgOutage      time.Duration // d: how long PostgreSQL stays down
	capSubs       int           // e: subscriptions of the fan-out
	capEvents     int           // e: events fanned out
	hostileEvents int           // f: events sent to the hostile receivers
	crashEvents   int           // g: events published while the API is killed three times
	crashGiveUp   time.Duration // g: how long a publisher retries one event
	settle        time.Duration // how long deliveries may take after the fault
}

var scales = map[string]scale{
	"full": {burst: 1000, inFlight: 10, tEvents: 200, pgEvents: 100, pgOutage: 30 * time.Second,
		capSubs: 100, capEvents: 3, hostileEvents: 3, settle: 5 * time.Minute,
		// Past the API's 5-minute claim lease, so a claim a crash leaves
		// behind shows its whole cost.
		crashEvents: 1000, crashGiveUp: 6 * time.Minute},
	"short": {burst: 150, inFlight: 10, tEvents: 60, pgEvents: 30, pgOutage: 12 * time.Second,
		capSubs: 50, capEvents: 2, hostileEvents: 1, settle: 150 * time.Second,
		crashEvents: 200, crashGiveUp: 30 * time.Second},
}

// harness is what every scenario shares: one stack, two receivers.
type harness struct {
	st        *stack
	rc        *receiver.Receiver // trusted by the worker
	untrusted *receiver.Receiver // presents a certificate nobody trusts
	sc        scale
	mode      string

	mu      sync.Mutex
	summary []string
	notes   []string // what the scenarios measured besides the tally
	reasons []string // why scenarios failed
	badSeen int      // signature failures already reported
}

// scenarios run in this order, on one stack; each has its own workspace.
var scenarios = []struct {
	name string
	run  func(*testing.T, *harness) tally
}{
	{"a-worker-sigkill", scenarioWorkerKill},
	{"b-worker-sigterm", scenarioWorkerTerm},
	{"c-temporal-down", scenarioTemporalDown},
	{"d-postgres-down", scenarioPostgresDown},
	{"e-fanout-cap", scenarioFanOut},
	{"f-hostile-receivers", scenarioHostile},
	{"g-api-crash-loop", scenarioAPICrashLoop},
}

func TestReliability(t *testing.T) {
	mode := os.Getenv("RELIABILITY")
	if mode == "" {
		t.Skip("the fault suite runs with RELIABILITY=short or full (make reliability-short, make reliability)")
	}
	if testing.Short() {
		mode = "short"
	}
	sc, ok := scales[mode]
	if !ok {
		t.Fatalf("RELIABILITY=%q: want short or full", mode)
	}
	only := regexp.MustCompile(os.Getenv("RELIABILITY_RUN"))

	// The PostgreSQL server user must be able to traverse the run folder.
	dir, err := os.MkdirTemp("", "reliability-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("run folder (logs, data): %s", dir)
	bin := os.Getenv("RELIABILITY_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "bin")
	}
	if os.Getenv("RELIABILITY_PREBUILT") == "" {
		begin := time.Now()
		if err := buildBinaries(bin); err != nil {
			t.Fatal(err)
		}
		t.Logf("binaries in %s (built in %v)", bin, time.Since(begin).Round(time.Second))
	} else {
		t.Logf("using the binaries already in %s (RELIABILITY_PREBUILT)", bin)
	}

	h := &harness{sc: sc, mode: mode, rc: receiver.New()}
	defer h.rc.Close()
	cert, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	h.untrusted = receiver.NewWithCert(*cert)
	defer h.untrusted.Close()
	certFile := filepath.Join(dir, "receivers.pem")
	if err := h.rc.WritePEM(certFile); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	h.st, err = startStack(ctx, dir, bin, certFile)
	defer func() {
		if h.st != nil {
			h.st.Stop()
		}
	}()
	if err != nil {
		t.Fatalf("start the stack: %v (logs in %s)", err, dir)
	}

	for _, s := range scenarios {
		if !only.MatchString(s.name) {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			begin, finished := time.Now(), false
			defer func() {
				if !finished { // t.Fatal ended the scenario before its tally
					h.mu.Lock()
					h.summary = append(h.summary, fmt.Sprintf("%-20s %8s %9s %5s %10s %9s  FAIL  %v (aborted, see the test log)",
						s.name, "-", "-", "-", "-", "-", time.Since(begin).Round(time.Second)))
					h.mu.Unlock()
				}
			}()
			h.ensureUp(t)
			res := s.run(t, h)
			h.verdict(t, s.name, res, time.Since(begin))
			finished = true
		})
	}

	table := h.table()
	fmt.Print("\n" + table)
	if path := os.Getenv("RELIABILITY_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.Logf("logs of the processes: %s/{api,worker,temporal,temporal-server,postgres}.log", dir)
	} else if os.Getenv("RELIABILITY_KEEP") == "" {
		h.st.Stop()
		h.st = nil
		_ = os.RemoveAll(dir)
	}
}

// verdict records the scenario's summary line and fails it on any lost
// event, record anomaly or undelivered event; duplicates are reported only.
func (h *harness) verdict(t *testing.T, name string, res tally, took time.Duration) {
	t.Helper()
	bad := append(h.rc.Refusals(), h.untrusted.Refusals()...)
	if len(bad) > h.badSeen {
		h.failf(t, "%d requests failed signature verification, e.g. %s", len(bad)-h.badSeen, bad[h.badSeen])
		h.badSeen = len(bad)
	}
	if res.lost != 0 {
		first := res.lostEvents[0]
		h.failf(t, "%d accepted events lost; e.g. %s: %s", res.lost, first, h.explain(first))
		for _, ev := range res.lostEvents[1:] {
			t.Logf("lost %s: %s", ev, h.explain(ev))
		}
	}
	if res.anomalies != 0 {
		h.failf(t, "%d record anomalies:\n  %s", res.anomalies, strings.Join(res.anomalyNotes, "\n  "))
	}
	if res.delivered != res.accepted {
		h.failf(t, "%d of %d accepted events delivered", res.delivered, res.accepted)
	}
	t.Logf("%s: %s (%v)", name, res, took.Round(time.Second))
	status := "PASS"
	if t.Failed() {
		status = "FAIL"
		t.Logf("logs: %s", h.st.Dir)
	}
	h.mu.Lock()
	h.summary = append(h.summary, fmt.Sprintf("%-20s %8d %9d %5d %10d %9d  %s  %v",
		name, res.accepted, res.delivered, res.lost, res.duplicates, res.anomalies, status, took.Round(time.Second)))
	h.mu.Unlock()
}

func (h *harness) table() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "reliability (%s scale, %s)\n", h.mode, time.Now().Format(time.RFC3339))
	fmt.Fprintf(&b, "%-20s %8s %9s %5s %10s %9s  %s\n", "scenario", "accepted", "delivered", "lost", "duplicates", "anomalies", "result")
	for _, line := range h.summary {
		b.WriteString(line + "\n")
	}
	if len(h.reasons) > 0 {
		b.WriteString("failures:\n")
		for _, line := range h.reasons {
			b.WriteString("  " + line + "\n")
		}
	}
	if len(h.notes) > 0 {
		b.WriteString("notes:\n")
		for _, line := range h.notes {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

// notef logs a measurement and keeps it for the summary.
func (h *harness) notef(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	t.Log(msg)
	h.mu.Lock()
	h.notes = append(h.notes, scenarioName(t)+": "+msg)
	h.mu.Unlock()
}

// failf fails the scenario and keeps the reason (its first line, cut
// short) for the summary.
func (h *harness) failf(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	t.Error(msg)
	first, _, _ := strings.Cut(msg, "\n")
	h.mu.Lock()
	h.reasons = append(h.reasons, scenarioName(t)+": "+truncate(first, 300))
	h.mu.Unlock()
}

func scenarioName(t *testing.T) string {
	name := t.Name()
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// ensureUp restarts whatever an earlier scenario left stopped.
func (h *harness) ensureUp(t *testing.T) {
	t.Helper()
	if err := h.st.DB.PingContext(context.Background()); err != nil {
		if err := h.st.StartPostgres(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*proc{h.st.Temporal, h.st.API, h.st.Worker} {
		if p.PID() == 0 {
			if err := p.Start(t.Context(), 2*time.Minute); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// workspace bootstraps a workspace for a scenario and returns its client.
func (h *harness) workspace(t *testing.T, name string) *apiClient {
	t.Helper()
	ws, err := h.st.Bootstrap(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return &apiClient{apiclient.New("api", h.st.APIAddr, ws.Secret, ws.WorkspaceID)}
}

// subscribe creates one subscription per endpoint, each receiving through
// e (on rc, or on the untrusted receiver when untrusted is set).
func (h *harness) subscribe(t *testing.T, c *apiClient, rc *receiver.Receiver, want expectation, eps ...*endpoint) []subscription {
	t.Helper()
	var subs []subscription
	for _, e := range eps {
		id, secret, err := c.createWebhook(context.Background(), e.URL())
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Trust(secret); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, subscription{id: id, e: e, expect: want})
	}
	return subs
}

// settle waits for the scenario's deliveries and returns the tally.
func (h *harness) settle(t *testing.T, subs []subscription, events []string) tally {
	t.Helper()
	res, err := settle(context.Background(), h.st.DB, subs, events, h.sc.settle, h.workflowClosed)
	if err != nil {
		t.Errorf("checker: %v", err)
	}
	return res
}

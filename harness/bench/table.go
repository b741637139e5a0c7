package bench

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"
)

// check is one target of a row.
type check struct {
	what string // "p99 < 20 ms"
	ok   bool
}

// row is one line of the table.
type row struct {
	id, name   string
	throughput string
	lat        *lat
	use        *usage
	// deliveries is what use's CPU is divided by for the row's CPU per
	// delivery (workflows for T); 0: no such column.
	deliveries int
	vs         string // ratio to the baseline, or the figure the target is about
	baseline   bool
	checks     []check
}

func (h *harness) add(r row) {
	h.rows = append(h.rows, r)
	if r.use != nil {
		for i, n := range r.use.procs {
			h.peakProcs[i] = max(h.peakProcs[i], n)
		}
	}
	h.logf("   %s %s: %s %s %s", r.id, r.name, r.throughput, latCell(r.lat), r.vs)
}

func ms(d time.Duration) string {
	v := float64(d.Microseconds()) / 1000
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.1f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	default:
		return fmt.Sprintf("%.1f ms", v)
	}
}

func latCell(l *lat) string {
	if l == nil || l.n == 0 {
		return "- | - | -"
	}
	return ms(l.p50) + " | " + ms(l.p99) + " | " + ms(l.max)
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func useCells(u *usage) (cpu, rss string) {
	if u == nil {
		return "-", "-"
	}
	var c, r []string
	for i := range nProcs {
		c = append(c, num(u.cpu[i]))
		r = append(r, num(u.peak[i]))
	}
	return strings.Join(c, " / "), strings.Join(r, " / ")
}

// perDelivery is the CPU milliseconds of each tier per delivery.
func perDeliveryCell(r row) string {
	if r.use == nil || r.deliveries <= 0 {
		return "-"
	}
	var c []string
	for i := range nProcs {
		c = append(c, num(r.use.cpu[i]*1000/float64(r.deliveries)))
	}
	return strings.Join(c, " / ")
}

// render is the whole report: a header naming the machine, the table,
// then notes.
func (h *harness) render(took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### make bench (%s mode), %s\n\n", h.cfg.Mode, time.Now().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Machine: %d CPUs (%s), %s, %s; commit %s; the whole run took %v.\n\n",
		runtime.NumCPU(), cpuModel(), memTotal(), runtime.Version(), commit(), took.Round(time.Second))
	procs := fmt.Sprintf("%d api and %d worker processes", h.cfg.APIs, h.cfg.Workers)
	if h.topo == TopologyStack {
		b.WriteString("Topology: make stack's (production's), Temporal's own server on a PostgreSQL cluster of its own, " + procs + ".\n\n")
	} else {
		b.WriteString("Topology: make dev's, devtemporal (the embedded Temporal server, history in a SQLite file, in its own process; " +
			"its ceiling is SQLite's single writer), " + procs + "; no temporal pg tier.\n\n")
	}
	b.WriteString("PostgreSQL runs with fsync, synchronous_commit and full_page_writes off (a throwaway cluster): " +
		"publishing and every other write would be slower on a durable one.\n\n")
	b.WriteString("| # | scenario | throughput | p50 | p99 | max | CPU s: api / worker / temporal / temporal pg / pg | CPU ms per delivery (T: per workflow): api / worker / temporal / temporal pg / pg | peak RSS MiB: api / worker / temporal / temporal pg / pg | vs baseline | target: result |\n")
	b.WriteString("| - | - | - | - | - | - | - | - | - | - | - |\n")
	// Baselines first (Q is measured in scenario 6, on its seeded
	// workspace), then by scenario number: 10 and 11 run before 9, whose
	// backlog outlasts it.
	rows := append([]row(nil), h.rows...)
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].baseline != rows[j].baseline {
			return rows[i].baseline
		}
		return scenarioNum(rows[i].id) < scenarioNum(rows[j].id)
	})
	for _, r := range rows {
		cpu, rss := useCells(r.use)
		var res []string
		for _, c := range r.checks {
			verdict := "**missed**"
			if c.ok {
				verdict = "met"
			}
			res = append(res, c.what+": "+verdict)
		}
		result := strings.Join(res, "; ")
		switch {
		case r.baseline:
			result = "(baseline)"
		case result == "":
			result = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.id, r.name, r.throughput, latCell(r.lat), cpu, perDeliveryCell(r), rss, orDash(r.vs), result)
	}
	b.WriteString("\nLatency is publish→receipt for deliveries (from the POST being sent to the receiver having the request), " +
		"the request's own time for the API and the baselines. CPU is each tier's user+system time over the scenario's window " +
		"(api and worker: every process of the tier); temporal pg and pg sum a PostgreSQL cluster's processes (backends that exited included), " +
		"their RSS is the sum of proportional set sizes. CPU per delivery divides the window's CPU by the deliveries received in that window. " +
		"The service's own share is api + worker + pg; Temporal's is temporal + temporal pg. " +
		"The HTTPS receiver, T's worker and every client run in the harness's process, which shares the same CPUs and is not in the table. " +
		"Deliveries count distinct events per endpoint; duplicates, if any, are in the notes.\n")
	fmt.Fprintf(&b, "\nPeak PostgreSQL processes (one backend per connection, plus about 6 auxiliary ones): pg %d", h.peakProcs[pPostgres])
	if h.topo == TopologyStack {
		fmt.Fprintf(&b, ", temporal pg %d", h.peakProcs[pTemporalPG])
	}
	b.WriteString(" (max_connections: docs/deployment.md#database-connections).\n")
	fmt.Fprintf(&b, "Scenarios 1–5: %d publishes refused, %d duplicate deliveries.\n", h.refused, h.duplicates)
	if len(h.notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range h.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

// scenarioNum is the number a row id starts with ("10b": 10; T: 0).
func scenarioNum(id string) int {
	n := 0
	for _, c := range id {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	v, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "? RAM"
	}
	var kb float64
	for _, line := range strings.Split(string(v), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			fmt.Sscan(strings.TrimSpace(rest), &kb)
		}
	}
	return fmt.Sprintf("%.0f GiB RAM", kb/1024/1024)
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

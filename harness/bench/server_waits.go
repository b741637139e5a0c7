package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// serverWaits is where a workflow start spends its time inside Temporal's
// history service, from the server's own /metrics (the stack only:
// devtemporal exports none). Issue 28's neighbour windows read it to say
// why B's starts are slow beside a flood: each history shard lets one
// persistence write through at a time (history.shardIOConcurrency), so a
// start queues behind every other write of its shard.
type serverWaits struct {
	starts    histSum // history's StartWorkflowExecution, whole request
	shardWait histSum // waits for a shard's I/O semaphore (one per write, and its shard-info updates)
	writes    histSum // workflow writes (create, update) in PostgreSQL
	// dur is the time between the window's two scrapes.
	dur time.Duration
}

// histSum is a histogram's count and sum (seconds).
type histSum struct{ n, sum float64 }

func (h histSum) minus(o histSum) histSum { return histSum{h.n - o.n, h.sum - o.sum} }

func (h histSum) plus(o histSum) histSum { return histSum{h.n + o.n, h.sum + o.sum} }

// mean is the average in ms, NaN-free: 0 without observations.
func (h histSum) mean() float64 {
	if h.n <= 0 {
		return 0
	}
	return 1000 * h.sum / h.n
}

func (w serverWaits) minus(o serverWaits) serverWaits {
	return serverWaits{starts: w.starts.minus(o.starts), shardWait: w.shardWait.minus(o.shardWait), writes: w.writes.minus(o.writes)}
}

// reset reports whether a counter went back: the server restarted.
func (w serverWaits) reset() bool {
	return min(w.starts.n, w.starts.sum, w.shardWait.n, w.shardWait.sum, w.writes.n, w.writes.sum) < 0
}

// readServerWaits scrapes addr's /metrics.
func readServerWaits(ctx context.Context, addr string) (serverWaits, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return serverWaits{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return serverWaits{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return serverWaits{}, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return serverWaits{}, err
	}
	return serverWaits{
		starts:    sumHist(fams["service_latency"], map[string]string{"service_name": "history", "operation": "StartWorkflowExecution"}),
		shardWait: sumHist(fams["semaphore_latency"], map[string]string{"service_name": "history", "operation": "ShardInfo"}),
		writes: sumHist(fams["persistence_latency"], map[string]string{"operation": "CreateWorkflowExecution"}).
			plus(sumHist(fams["persistence_latency"], map[string]string{"operation": "UpdateWorkflowExecution"})),
	}, nil
}

// sumHist adds up the histograms of f whose labels include want.
func sumHist(f *dto.MetricFamily, want map[string]string) histSum {
	var out histSum
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && have[k] == v
		}
		if h := m.GetHistogram(); match && h != nil {
			out.n += float64(h.GetSampleCount())
			out.sum += h.GetSampleSum()
		}
	}
	return out
}

// serverMeter reads serverWaits at a window's start and end; on a stack
// without the server's metrics it reads nothing.
type serverMeter struct {
	addr  string
	start serverWaits
	at    time.Time // when the first scrape was read
	err   error
}

func startServerMeter(ctx context.Context, addr string) *serverMeter {
	m := &serverMeter{addr: addr}
	if addr != "" {
		m.start, m.err = readServerWaits(ctx, addr)
		m.at = time.Now()
	}
	return m
}

// end returns the window's waits; ok is false where none could be read.
func (m *serverMeter) end(ctx context.Context) (serverWaits, bool, error) {
	if m.addr == "" {
		return serverWaits{}, false, nil
	}
	if m.err != nil {
		return serverWaits{}, false, m.err
	}
	now, err := readServerWaits(ctx, m.addr)
	if err != nil {
		return serverWaits{}, false, err
	}
	w := now.minus(m.start)
	if w.reset() {
		return serverWaits{}, false, errors.New("the Temporal server restarted during the window (its counters went back)")
	}
	w.dur = time.Since(m.at)
	return w, true, nil
}

// noteServerWaits notes where window id's workflow starts spent their
// time inside Temporal's history service.
func (h *harness) noteServerWaits(id string, w noisyWindow) {
	if w.serverKnown {
		h.notef("%s: %s", id, h.serverText(w.server))
	}
}

// serverText says where a window spent its time inside Temporal's history
// service, and how busy its shards' writes kept each shard.
func (h *harness) serverText(s serverWaits) string {
	t := fmt.Sprintf("inside Temporal's history service over the window (its /metrics), means: a workflow start %s ms (%.0f starts); a wait for a shard's I/O semaphore, which lets history.shardIOConcurrency writes of the shard through at a time, %s ms (%.0f waits); a workflow write in PostgreSQL %s ms (%.0f writes)",
		num(s.starts.mean()), s.starts.n, num(s.shardWait.mean()), s.shardWait.n, num(s.writes.mean()), s.writes.n)
	if n := h.historyShards(); n > 0 && s.dur > 0 {
		t += fmt.Sprintf("; the writes' time per shard per second of the window, over its %d shards: %s s (at 1 each shard writes all the time, and with the default concurrency of 1 its next write waits)",
			n, num(s.writes.sum/s.dur.Seconds()/float64(n)))
	}
	return t
}

// historyShards is the server's NUM_HISTORY_SHARDS (0: unknown).
func (h *harness) historyShards() int {
	if h.st.Temporal == nil {
		return 0
	}
	for _, kv := range h.st.Temporal.Env {
		if v, ok := strings.CutPrefix(kv, "NUM_HISTORY_SHARDS="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

package bench

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// The tiers a row reports on, in table order: every api process, every
// worker process, Temporal's server, Temporal's own PostgreSQL cluster
// (the stack only: devtemporal keeps its history in its own process), the
// service's PostgreSQL cluster.
const (
	pAPI = iota
	pWorker
	pTemporal
	pTemporalPG
	pPostgres
	nProcs
)

// usage is CPU seconds spent and peak resident memory over a window, per
// tier; NaN where a tier could not be read or does not exist.
type usage struct {
	cpu  [nProcs]float64
	peak [nProcs]float64
	// procs is the most processes seen at once in each tier: for a
	// PostgreSQL cluster its backends (one per connection) plus about 6
	// auxiliary processes.
	procs [nProcs]int
}

// totalCPU sums the CPU of every tier read.
func (u usage) totalCPU() float64 {
	var t float64
	for _, v := range u.cpu {
		if !math.IsNaN(v) {
			t += v
		}
	}
	return t
}

// ownCPU is the service's own share: its api and worker processes and
// its PostgreSQL, without Temporal's server and storage.
func (u usage) ownCPU() float64 { return nz(u.cpu[pAPI]) + nz(u.cpu[pWorker]) + nz(u.cpu[pPostgres]) }

// temporalCPU is Temporal's share: its server and its PostgreSQL.
func (u usage) temporalCPU() float64 { return nz(u.cpu[pTemporal]) + nz(u.cpu[pTemporalPG]) }

func nz(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// meter reads every tier's CPU time at its start and end and samples
// resident memory in between (every 200 ms) for the peak.
type meter struct {
	st    *procstack.Stack
	start [nProcs]float64
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	peak  [nProcs]float64
	procs [nProcs]int
}

// readAll reads every tier of the stack once; a tier of several
// processes (apis, workers) is their sum, NaN if one cannot be read.
func readAll(st *procstack.Stack) [nProcs]procstack.Usage {
	var out [nProcs]procstack.Usage
	nan := procstack.Usage{CPUSeconds: math.NaN(), RSSMiB: math.NaN()}
	sum := func(procs []*procstack.Proc) procstack.Usage {
		var t procstack.Usage
		for _, p := range procs {
			u, err := p.Usage()
			if err != nil {
				return nan
			}
			t.CPUSeconds += u.CPUSeconds
			t.RSSMiB += u.RSSMiB
			t.Processes++
		}
		return t
	}
	out[pAPI] = sum(st.APIs)
	out[pWorker] = sum(st.Workers)
	out[pTemporal] = sum([]*procstack.Proc{st.Temporal})
	out[pTemporalPG], out[pPostgres] = nan, nan
	if u, err := st.PostgresUsage(); err == nil {
		out[pPostgres] = u
	}
	if st.TemporalPG != nil {
		if pid, err := procstack.PostmasterPID(st.TemporalPG.Dir); err == nil {
			if u, err := procstack.TreeUsage(pid); err == nil {
				out[pTemporalPG] = u
			}
		}
	}
	return out
}

func startMeter(st *procstack.Stack) *meter {
	m := &meter{st: st, stop: make(chan struct{}), done: make(chan struct{})}
	now := readAll(st)
	for i, u := range now {
		m.start[i] = u.CPUSeconds
		m.peak[i] = u.RSSMiB
	}
	go func() {
		defer close(m.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *meter) sample() [nProcs]procstack.Usage {
	now := readAll(m.st)
	m.mu.Lock()
	for i, u := range now {
		if math.IsNaN(m.peak[i]) || u.RSSMiB > m.peak[i] {
			m.peak[i] = u.RSSMiB
		}
		m.procs[i] = max(m.procs[i], u.Processes)
	}
	m.mu.Unlock()
	return now
}

// end stops the meter and returns the window's usage.
func (m *meter) end() usage {
	close(m.stop)
	<-m.done
	now := m.sample()
	var u usage
	for i := range now {
		u.cpu[i] = now[i].CPUSeconds - m.start[i]
		u.peak[i] = m.peak[i]
		u.procs[i] = m.procs[i]
	}
	return u
}

// lat summarises latencies: p50, p99 and max (nearest rank).
type lat struct {
	n             int
	p50, p99, max time.Duration
}

func summarize(d []time.Duration) lat {
	if len(d) == 0 {
		return lat{}
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return lat{n: len(s), p50: rank(0.50), p99: rank(0.99), max: s[len(s)-1]}
}

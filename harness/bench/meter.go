package bench

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// The processes a row reports on, in table order.
const (
	pAPI = iota
	pWorker
	pTemporal
	pPostgres
	nProcs
)

// usage is CPU seconds spent and peak resident memory over a window, per
// process; NaN where a process could not be read.
type usage struct {
	cpu  [nProcs]float64
	peak [nProcs]float64
}

// totalCPU sums the CPU of every process read.
func (u usage) totalCPU() float64 {
	var t float64
	for _, v := range u.cpu {
		if !math.IsNaN(v) {
			t += v
		}
	}
	return t
}

// meter reads every process's CPU time at its start and end and samples
// resident memory in between (every 200 ms) for the peak.
type meter struct {
	st    *procstack.Stack
	start [nProcs]float64
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	peak  [nProcs]float64
}

// readAll reads every process of the stack once.
func readAll(st *procstack.Stack) [nProcs]procstack.Usage {
	var out [nProcs]procstack.Usage
	for i := range out {
		out[i] = procstack.Usage{CPUSeconds: math.NaN(), RSSMiB: math.NaN()}
	}
	for i, p := range []*procstack.Proc{st.API, st.Worker, st.Temporal} {
		if u, err := p.Usage(); err == nil {
			out[i] = u
		}
	}
	if u, err := st.PostgresUsage(); err == nil {
		out[pPostgres] = u
	}
	// Temporal's own server keeps its state in a cluster of its own, where
	// devtemporal keeps it in its process (SQLite): the column is Temporal
	// with its storage either way.
	if st.TemporalPG != nil && !math.IsNaN(out[pTemporal].CPUSeconds) {
		pid, err := procstack.PostmasterPID(st.TemporalPG.Dir)
		if err == nil {
			var u procstack.Usage
			if u, err = procstack.TreeUsage(pid); err == nil {
				out[pTemporal].CPUSeconds += u.CPUSeconds
				out[pTemporal].RSSMiB += u.RSSMiB
			}
		}
		if err != nil {
			out[pTemporal] = procstack.Usage{CPUSeconds: math.NaN(), RSSMiB: math.NaN()}
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

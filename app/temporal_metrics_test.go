package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The SDK's series land in the process's registry under Prometheus names
// (counters _total, timers as histograms in _seconds); one the registry
// refuses (the same name with other labels, as the SDK sometimes reports)
// is logged once and dropped, never a panic.
func TestTemporalMetricsBridge(t *testing.T) {
	reg := prometheus.NewRegistry()
	clash := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "temporal_clash_total", Help: "h"}, []string{"a"})
	reg.MustRegister(clash)
	var logs bytes.Buffer
	h, closer := temporalMetrics(reg, slog.New(slog.NewTextHandler(&logs, nil)))

	h.WithTags(map[string]string{"task_queue": "q"}).Counter("temporal_things").Inc(2)
	h.Timer("temporal_wait").Record(1500 * time.Millisecond)
	for range 2 {
		h.WithTags(map[string]string{"b": "1"}).Counter("temporal_clash").Inc(1)
	}
	closer.Close() // flushes the scope into the registry

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var things, waits, count float64
	var queue string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "temporal_things_total":
				things = m.GetCounter().GetValue()
				for _, l := range m.GetLabel() {
					if l.GetName() == "task_queue" {
						queue = l.GetValue()
					}
				}
			case "temporal_wait_seconds":
				waits, count = m.GetHistogram().GetSampleSum(), float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	if things != 2 || queue != "q" {
		t.Errorf("temporal_things_total{task_queue=%q} = %v, want 2 with task_queue q", queue, things)
	}
	if waits != 1.5 || count != 1 {
		t.Errorf("temporal_wait_seconds: %v observations summing to %v s, want one of 1.5 s", count, waits)
	}
	if c := strings.Count(logs.String(), "temporal sdk metric not exported"); c != 1 {
		t.Errorf("%d warnings for the clashing series, want 1:\n%s", c, logs.String())
	}
}

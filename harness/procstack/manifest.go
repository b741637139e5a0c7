package procstack

import (
	"encoding/json"
	"os"

	"github.com/openlayer-ai/workspace-service/harness/devpg"
)

// Manifest is what harness/cmd/stack writes to <dir>/stack.json once everything
// serves: the addresses, the process ids (so a test can kill one and
// check that none outlives the stack) and the admin key it bootstrapped.
type Manifest struct {
	Namespace string `json:"namespace"`
	TaskQueue string `json:"taskQueue"`
	// APIs and Workers are the service's processes.
	APIs    []Process `json:"apis"`
	Workers []Process `json:"workers"`
	// Temporal is the server's frontend (gRPC); TemporalMetrics its
	// /metrics; TemporalUI the Web UI's URL (empty: not served), served by
	// the process TemporalUIPID.
	Temporal        Process `json:"temporal"`
	TemporalMetrics string  `json:"temporalMetrics"`
	TemporalUI      string  `json:"temporalUI,omitempty"`
	TemporalUIPID   int     `json:"temporalUIPid,omitempty"`
	// Prometheus is its URL (empty: not started).
	Prometheus string `json:"prometheus,omitempty"`
	// Jaeger serves the trace UI and query API at its address (empty: no
	// Jaeger); JaegerUI is whether that is the real UI (a jaeger-ui build
	// given) or the placeholder page of a Jaeger built from its Go module;
	// OTLP is its OTLP gRPC receiver, where the processes export.
	Jaeger   Process `json:"jaeger"`
	JaegerUI bool    `json:"jaegerUI,omitempty"`
	OTLP     string  `json:"otlp,omitempty"`
	// DatabaseURL is the application's database; Postmasters are the
	// process ids of both PostgreSQL clusters.
	DatabaseURL string `json:"databaseUrl"`
	Postmasters []int  `json:"postmasters"`
	// WorkspaceID and AdminKey are what admin bootstrap made.
	WorkspaceID string `json:"workspaceId"`
	AdminKey    string `json:"adminKey"`
	// Logs is the folder holding every process's log.
	Logs string `json:"logs"`
}

// Process is one process of the stack.
type Process struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	PID  int    `json:"pid"`
}

// ReadManifest reads a stack.json.
func ReadManifest(path string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// WriteManifest writes m to path, readable by its owner only (it holds
// an admin key), through a rename so a reader never sees half of it.
func WriteManifest(path string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Manifest describes the running stack (without the UI, Prometheus and
// the admin key, which harness/cmd/stack adds).
func (s *Stack) Manifest() Manifest {
	m := Manifest{Namespace: s.Namespace, TaskQueue: s.TaskQueue, TemporalMetrics: s.TemporalMetricsAddr,
		DatabaseURL: s.DBURL, Logs: s.Dir}
	for i, p := range s.APIs {
		m.APIs = append(m.APIs, Process{Name: p.Name, Addr: s.APIAddrs[i], PID: p.PID()})
	}
	for i, p := range s.Workers {
		m.Workers = append(m.Workers, Process{Name: p.Name, Addr: s.WorkerAddrs[i], PID: p.PID()})
	}
	if s.Temporal != nil {
		m.Temporal = Process{Name: s.Temporal.Name, Addr: s.TAddr, PID: s.Temporal.PID()}
	}
	if s.Jaeger != nil {
		m.Jaeger = Process{Name: s.Jaeger.Name, Addr: s.JaegerAddr, PID: s.Jaeger.PID()}
		m.JaegerUI, m.OTLP = s.JaegerUI, s.OTLPAddr
	}
	for _, pg := range []*devpg.Cluster{s.PG, s.TemporalPG} {
		if pg == nil {
			continue
		}
		if pid, err := PostmasterPID(pg.Dir); err == nil {
			m.Postmasters = append(m.Postmasters, pid)
		}
	}
	return m
}

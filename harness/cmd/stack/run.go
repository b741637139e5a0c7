package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/devprom"
	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

func run(ctx context.Context, o options) error {
	begin := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	// Before the build: a --dir that is refused is better known at once.
	if err := procstack.ClearDir(ctx, o.dir); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	if !o.prebuilt {
		logf("building api, worker, admin, temporal-server and temporal-sql-tool into %s (the first build compiles the Temporal server: minutes)", o.bin)
		if err := procstack.BuildServerBinaries(ctx, o.bin); err != nil {
			if ctx.Err() != nil {
				return errInterrupted
			}
			return err
		}
		if o.traces {
			logf("building jaeger into %s (the first build compiles the OpenTelemetry collector: minutes)", o.bin)
			if err := procstack.BuildJaeger(ctx, o.bin); err != nil {
				if ctx.Err() != nil {
					return errInterrupted
				}
				return err
			}
		}
		logf("built")
	}
	if ctx.Err() != nil {
		return errInterrupted
	}

	logf("starting PostgreSQL (2 clusters), Temporal, Jaeger, the migrations, %d APIs and %d workers; logs in %s", o.apis, o.workers, o.dir)
	st, err := procstack.Start(ctx, procstack.Options{
		Dir: o.dir, Bin: o.bin, TemporalServer: true, APIs: o.apis, Workers: o.workers, CertFile: o.certFile,
		Traces: o.traces, TracesUI: o.jaegerUI,
	})
	if st != nil {
		defer func() {
			logf("stopping (Ctrl-C again ends this process at once, leaving the PostgreSQL clusters to the next run, which stops them)")
			st.Stop()
			logf("stopped; logs in %s", o.dir)
		}()
	}
	if err := interrupted(ctx, err); err != nil {
		return err
	}
	m := st.Manifest()

	watched := append(append([]*procstack.Proc{st.Temporal}, st.APIs...), st.Workers...)
	if st.Jaeger != nil {
		watched = append(watched, st.Jaeger)
	}
	if o.uiPort >= 0 {
		ui, url, err := startUI(ctx, o.dir, o.uiPort, st.TAddr)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("--ui-port: %w", err)
		} else if err != nil {
			return errInterrupted
		}
		defer func() { _, _ = ui.Terminate(5 * time.Second) }()
		m.TemporalUI, m.TemporalUIPID = url, ui.PID()
		watched = append(watched, ui)
	}
	// The compose deployment's configuration, its jobs pointed at the
	// loopback processes (the prometheus job, which scrapes itself, is
	// dropped: its port is not known before it starts).
	prom, err := devprom.Start(ctx, devprom.Options{
		Targets: map[string][]string{
			"api": st.APIAddrs, "worker": st.WorkerAddrs, "temporal": {st.TemporalMetricsAddr},
		},
		ScrapeInterval: o.scrapeInterval,
		Dir:            filepath.Join(o.dir, "prometheus"),
	})
	if err := interrupted(ctx, err); err != nil {
		return err
	}
	defer prom.Stop()
	m.Prometheus = prom.URL

	ws, err := st.Bootstrap(ctx, "Stack")
	if err := interrupted(ctx, err); err != nil {
		return err
	}
	m.WorkspaceID, m.AdminKey = ws.WorkspaceID, ws.Secret
	manifest := filepath.Join(o.dir, "stack.json")
	if err := procstack.WriteManifest(manifest, m); err != nil {
		return err
	}
	logf("ready")
	printAddresses(m, manifest)

	watch(ctx, watched, logf)
	return nil
}

// errInterrupted is run's error when a signal came before the stack was up.
var errInterrupted = errors.New("interrupted during startup; what had started is stopped")

// interrupted turns a startup step's error into errInterrupted when the
// step failed because a signal ended ctx.
func interrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

func printAddresses(m procstack.Manifest, manifest string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe production topology is running (Ctrl-C stops everything)\n")
	for _, p := range m.APIs {
		fmt.Fprintf(&b, "  %-13s http://%s/v1   metrics http://%s/metrics   pid %d\n", p.Name, p.Addr, p.Addr, p.PID)
	}
	for _, p := range m.Workers {
		fmt.Fprintf(&b, "  %-13s metrics http://%s/metrics   pid %d\n", p.Name, p.Addr, p.PID)
	}
	fmt.Fprintf(&b, "  %-13s %s (namespace %q, task queue %q)   metrics http://%s/metrics   pid %d\n",
		"Temporal", m.Temporal.Addr, m.Namespace, m.TaskQueue, m.TemporalMetrics, m.Temporal.PID)
	if m.TemporalUI != "" {
		fmt.Fprintf(&b, "  %-13s %s\n", "Temporal UI", m.TemporalUI)
	}
	if m.Prometheus != "" {
		fmt.Fprintf(&b, "  %-13s %s\n", "Prometheus", m.Prometheus)
	}
	if m.Jaeger.Addr != "" {
		// A Jaeger built from its Go module serves a placeholder page where
		// its UI would be (docs/operations.md#the-trace-viewer-jaeger).
		page := "web UI"
		if !m.JaegerUI {
			page = "query API; its page is a placeholder without --jaeger-ui"
		}
		fmt.Fprintf(&b, "  %-13s http://%s (%s)   OTLP %s   pid %d\n", "Jaeger", m.Jaeger.Addr, page, m.OTLP, m.Jaeger.PID)
		fmt.Fprintf(&b, "  %-13s http://%s/api/traces?service=workspace-api&tag=event.id:<eventId>\n", "event's trace", m.Jaeger.Addr)
	}
	fmt.Fprintf(&b, "  %-13s %s\n", "PostgreSQL", m.DatabaseURL)
	fmt.Fprintf(&b, "  %-13s %s\n", "workspace", m.WorkspaceID)
	fmt.Fprintf(&b, "  %-13s %s\n", "admin API key", m.AdminKey)
	fmt.Fprintf(&b, "  %-13s %s (all of the above)\n", "manifest", manifest)
	fmt.Fprintf(&b, "  %-13s %s/*.log\n", "logs", m.Logs)
	fmt.Fprintf(&b, "\ntry: curl -H \"Authorization: Bearer %s\" http://%s/v1/projects\n\n", m.AdminKey, m.APIs[0].Addr)
	fmt.Print(b.String())
}

// watch reports each process that ends on its own (a worker killed to
// see the other carry on, say) until ctx is done.
func watch(ctx context.Context, procs []*procstack.Proc, logf func(string, ...any)) {
	gone := map[*procstack.Proc]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		for _, p := range procs {
			if !gone[p] && p.PID() == 0 {
				gone[p] = true
				logf("%s exited (%v); see %s", p.Name, p.ExitErr(), p.LogPath)
			}
		}
	}
}

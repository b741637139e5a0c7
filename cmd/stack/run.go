package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiopts "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/openlayer-ai/workspace-service/internal/devprom"
	"github.com/openlayer-ai/workspace-service/internal/procstack"
)

func run(ctx context.Context, o options) error {
	begin := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	if !o.prebuilt {
		logf("building api, worker, admin, temporal-server and temporal-sql-tool into %s (the first build compiles the Temporal server: minutes)", o.bin)
		if err := procstack.BuildServerBinaries(o.bin); err != nil {
			return err
		}
		logf("built")
	}
	if err := procstack.ClearDir(ctx, o.dir); err != nil {
		return fmt.Errorf("clear %s: %w", o.dir, err)
	}
	// 0755: the PostgreSQL server user must traverse it.
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}

	logf("starting PostgreSQL (2 clusters), Temporal, the migrations, %d APIs and %d workers; logs in %s", o.apis, o.workers, o.dir)
	st, err := procstack.Start(ctx, procstack.Options{
		Dir: o.dir, Bin: o.bin, TemporalServer: true, APIs: o.apis, Workers: o.workers, CertFile: o.certFile,
	})
	if st != nil {
		defer func() {
			logf("stopping")
			st.Stop()
			logf("stopped; logs in %s", o.dir)
		}()
	}
	if err != nil {
		return err
	}
	m := st.Manifest()

	if o.uiPort >= 0 {
		stopUI, url, err := startUI(o.uiPort, st.TAddr)
		if err != nil {
			return err
		}
		defer stopUI()
		m.TemporalUI = url
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
	if err != nil {
		return err
	}
	defer prom.Stop()
	m.Prometheus = prom.URL

	ws, err := st.Bootstrap(ctx, "Stack")
	if err != nil {
		return err
	}
	m.WorkspaceID, m.AdminKey = ws.WorkspaceID, ws.Secret
	manifest := filepath.Join(o.dir, "stack.json")
	if err := procstack.WriteManifest(manifest, m); err != nil {
		return err
	}
	logf("ready")
	printAddresses(m, manifest)

	watch(ctx, st, logf)
	return nil
}

// startUI serves the Temporal Web UI in this process, as cmd/dev does
// (compose runs the temporalio/ui image, built from the same ui-server).
func startUI(port int, temporalAddr string) (stop func(), url string, err error) {
	if port == 0 {
		if port, err = procstack.FreePort(); err != nil {
			return nil, "", err
		}
	}
	// The UI server exits the process when it cannot listen: check first.
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, "", fmt.Errorf("--ui-port: %w", err)
	}
	l.Close()
	ui := uiserver.NewServer(uiopts.WithConfigProvider(&uiconfig.Config{
		Host:                "127.0.0.1",
		Port:                port,
		TemporalGRPCAddress: temporalAddr,
		EnableUI:            true,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}))
	go func() { _ = ui.Start() }()
	return ui.Stop, fmt.Sprintf("http://127.0.0.1:%d", port), nil
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
func watch(ctx context.Context, st *procstack.Stack, logf func(string, ...any)) {
	procs := append(append([]*procstack.Proc{st.Temporal}, st.APIs...), st.Workers...)
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

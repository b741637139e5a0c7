// Command bench is make bench: it builds the api, worker, admin and
// devtemporal binaries, starts them as separate processes with a
// throwaway PostgreSQL cluster, runs every scenario of the benchmark for a
// bounded time and prints one markdown table (also written to --out).
//
//	bench [--short] [--out bin/bench-table.md] [--bin bin/bench] [--prebuilt] [--keep] [--only 1,6]
//	      [--topology dev,stack | --stack] [--apis N] [--workers M] [--profile dir]
//
// The full mode measures both topologies, one after the other: make dev's
// (the embedded Temporal server) and make stack's (Temporal's own server
// on PostgreSQL), each with its own baselines and table. BENCH=short
// selects the short mode too (CI's scale, about 3 minutes, make dev's
// topology only unless --topology says otherwise).
// It exits 1 when a scenario aborts or the receiver refuses a request (a
// missed target does not), keeping the run folder and printing its path.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	short := fs.Bool("short", os.Getenv("BENCH") == "short", "CI's scale (BENCH=short)")
	var cfg bench.Config
	fs.StringVar(&cfg.Out, "out", "bin/bench-table.md", "also write the table here (empty: do not)")
	fs.StringVar(&cfg.Bin, "bin", "bin/bench", "build the binaries here, and reuse them (empty: a temporary folder)")
	fs.BoolVar(&cfg.Prebuilt, "prebuilt", false, "run the binaries already in --bin instead of building them")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the run folder (logs, data) after a good run")
	fs.StringVar(&cfg.Only, "only", "", "run only these scenarios (comma-separated: 1,2,3,4,5,6,7,8,9,10,11,12, or the names noisy (9), flood (10), slow (11), tracing (12); 8 needs 3); the baselines always run")
	topologies := fs.String("topology", "", "the topologies to measure, comma-separated: dev (the embedded Temporal on SQLite), stack (Temporal's own server on PostgreSQL); default dev,stack, or dev with --short")
	stackOnly := fs.Bool("stack", false, "measure make stack's topology only (--topology stack)")
	fs.StringVar(&cfg.Profile, "profile", "", "write CPU profiles of the api and worker processes and the service's PostgreSQL statements (pg_stat_statements) over scenarios 1 and 2 into this folder")
	fs.IntVar(&cfg.APIs, "apis", 1, "api processes")
	fs.IntVar(&cfg.Workers, "workers", 1, "worker processes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *stackOnly && *topologies != "" && *topologies != bench.TopologyStack:
		return fmt.Errorf("--stack and --topology %s disagree", *topologies)
	case *stackOnly:
		*topologies = bench.TopologyStack
	case *topologies == "" && *short:
		*topologies = bench.TopologyDev
	case *topologies == "":
		*topologies = bench.TopologyDev + "," + bench.TopologyStack
	}
	for _, t := range strings.Split(*topologies, ",") {
		cfg.Topologies = append(cfg.Topologies, strings.TrimSpace(t))
	}
	if cfg.Profile != "" {
		if err := os.MkdirAll(cfg.Profile, 0o755); err != nil {
			return err
		}
	}
	if cfg.APIs < 1 || cfg.Workers < 1 {
		return fmt.Errorf("--apis and --workers must be at least 1")
	}
	if cfg.Bin != "" {
		abs, err := filepath.Abs(cfg.Bin)
		if err != nil {
			return err
		}
		cfg.Bin = abs
	}
	cfg.Mode = "full"
	if *short {
		cfg.Mode = "short"
	}
	begin := time.Now()
	cfg.Log = func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	return bench.Run(ctx, cfg)
}

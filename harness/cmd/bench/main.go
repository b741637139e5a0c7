// Command bench is make bench: it builds the api, worker, admin and
// devtemporal binaries, starts them as separate processes with a
// throwaway PostgreSQL cluster, runs every scenario of the benchmark for a
// bounded time and prints one markdown table (also written to --out).
//
//	bench [--short] [--out bin/bench-table.md] [--bin bin/bench] [--prebuilt] [--keep] [--only 1,6] [--stack]
//
// BENCH=short selects the short mode too (CI's scale, about 3 minutes).
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
	fs.StringVar(&cfg.Only, "only", "", "run only these scenarios (comma-separated: 1,2,3,4,5,6,7,8,9 or noisy; 8 needs 3); the baselines always run")
	fs.BoolVar(&cfg.Stack, "stack", false, "run make stack's Temporal: its own server on PostgreSQL instead of devtemporal on SQLite")
	if err := fs.Parse(args); err != nil {
		return err
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

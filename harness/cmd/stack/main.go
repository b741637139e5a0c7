// Command stack runs the production topology of docker-compose.yml without
// containers, for trying it out and for the end-to-end test of make
// stack-test: two throwaway PostgreSQL clusters (the application's and
// Temporal's), Temporal's own server built from the module proxy at the
// version go.mod pins, its schema applied by Temporal's SQL tool
// (deploy/temporal/setup-schema.sh), the namespace and search attributes
// registered, the migrations, two api and two worker processes, the
// Temporal Web UI, Prometheus and Jaeger, built from the module proxy at
// the version harness/tools/jaeger/go.mod pins, receiving the processes'
// traces. It prints the addresses and an admin key,
// writes them to <dir>/stack.json, and stops everything on Ctrl-C
// (SIGINT or SIGTERM).
//
//	stack [--dir .data/stack] [--bin bin/stack] [--prebuilt] [--apis 2] [--workers 2]
//	      [--ui-port 0] [--cert-file receiver.pem] [--scrape-interval 15s]
//	      [--traces=true] [--jaeger-ui DIR]
//
// Every run starts from an empty --dir (a run that was killed is cleaned
// up first); the logs stay there after it stops. A --dir that holds
// anything but an earlier run is refused, never emptied. Ctrl-C during
// startup stops what has started; a second Ctrl-C ends the stack at once,
// leaving the clusters to the next run, which stops them.
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

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == uiCommand {
		if err := serveUI(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "stack "+uiCommand+":", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		// From here a second signal ends the process the default way,
		// however stuck the stop may be.
		stop()
	}()
	o, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stack:", err)
		os.Exit(1)
	}
}

type options struct {
	dir      string
	bin      string
	prebuilt bool
	apis     int
	workers  int
	uiPort   int
	certFile string
	// scrapeInterval replaces Prometheus's (0: the file's 15 s).
	scrapeInterval time.Duration
	// traces runs Jaeger, with jaegerUI's jaeger-ui build (empty: none).
	traces   bool
	jaegerUI string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("stack", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".data/stack", "run folder: data and logs (an earlier run's is emptied at start; any other non-empty folder is refused)")
	fs.StringVar(&o.bin, "bin", "bin/stack", "build the binaries here, and reuse them")
	fs.BoolVar(&o.prebuilt, "prebuilt", false, "run the binaries already in --bin instead of building them")
	fs.IntVar(&o.apis, "apis", 2, "api processes")
	fs.IntVar(&o.workers, "workers", 2, "worker processes")
	fs.IntVar(&o.uiPort, "ui-port", 0, "Temporal Web UI port on 127.0.0.1 (0: a free one; -1: no UI)")
	fs.StringVar(&o.certFile, "cert-file", "", "PEM of the CA the workers trust for webhook receivers, beside the system's (SSL_CERT_FILE)")
	fs.DurationVar(&o.scrapeInterval, "scrape-interval", 0, "Prometheus scrape interval (0: deploy/prometheus/prometheus.yml's)")
	fs.BoolVar(&o.traces, "traces", true, "run Jaeger and send the api's and the worker's traces to it (false: no tracing)")
	fs.StringVar(&o.jaegerUI, "jaeger-ui", "", "a jaeger-ui build (packages/jaeger-ui/build of jaeger-ui's release assets.tar.gz) for Jaeger to serve; without it a Jaeger built from its Go module serves a placeholder page beside its query API")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.jaegerUI != "" {
		if !o.traces {
			return o, fmt.Errorf("--jaeger-ui: with --traces=false there is no Jaeger")
		}
		ui, err := procstack.TracesUIAssets(o.jaegerUI)
		if err != nil {
			return o, fmt.Errorf("--jaeger-ui: %w", err)
		}
		o.jaegerUI = ui
	}
	if o.apis < 1 || o.workers < 1 {
		return o, fmt.Errorf("--apis and --workers: at least 1")
	}
	for _, p := range []*string{&o.dir, &o.bin, &o.certFile} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return o, err
		}
		*p = abs
	}
	return o, nil
}

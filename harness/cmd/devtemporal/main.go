// Command devtemporal runs the embedded Temporal server (harness/devtemporal)
// as a process of its own, with its history in a SQLite file, so that it can
// be stopped, killed and started again with its workflows intact. It is a
// dev and test tool: the reliability suite (harness/reliability) runs it to
// take Temporal away from the api and worker processes for real. Production
// runs a real Temporal cluster.
//
//	devtemporal --port 7233 --db-file .data/temporal.db [--namespace default] [--ui-port 0] [--log-file path] [--pprof-addr 127.0.0.1:6060]
//
// Once the frontend accepts connections it prints one line,
// "temporal ready 127.0.0.1:<port>", on stdout; SIGINT or SIGTERM stop it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"syscall"

	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "devtemporal:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var o devtemporal.Options
	fs := flag.NewFlagSet("devtemporal", flag.ContinueOnError)
	fs.IntVar(&o.Port, "port", 7233, "frontend gRPC port on 127.0.0.1 (0 picks a free one)")
	fs.StringVar(&o.DatabaseFile, "db-file", "", "SQLite file holding the history (required; created when missing, reused otherwise)")
	fs.StringVar(&o.Namespace, "namespace", "default", "namespace created on start if missing")
	fs.IntVar(&o.UIPort, "ui-port", 0, "serve the Web UI on this port (0: no UI)")
	fs.StringVar(&o.LogFile, "log-file", "", "the server's own warnings and errors (empty: discarded)")
	fs.BoolVar(&o.DurableSQLite, "durable", false, "keep SQLite's default journal and sync settings (slower; survives a power cut)")
	pprofAddr := fs.String("pprof-addr", os.Getenv("DEVTEMPORAL_PPROF_ADDR"), "serve net/http/pprof on this loopback address, to profile the server (empty: off; default $DEVTEMPORAL_PPROF_ADDR, so harnesses that start it can be profiled)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.DatabaseFile == "" {
		// An in-memory store would defeat the purpose: a restart must keep history.
		return errors.New("--db-file is required")
	}
	if *pprofAddr != "" {
		// Profiles reveal the server's internals: loopback only.
		host, _, err := net.SplitHostPort(*pprofAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("--pprof-addr %q: want a loopback address such as 127.0.0.1:6060", *pprofAddr)
		}
		ln, err := net.Listen("tcp", *pprofAddr)
		if err != nil {
			return fmt.Errorf("--pprof-addr: %w", err)
		}
		go func() { _ = http.Serve(ln, nil) }() // DefaultServeMux holds net/http/pprof
	}
	srv, err := devtemporal.Start(o)
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Println("temporal ready", srv.Addr())
	<-ctx.Done()
	return nil
}

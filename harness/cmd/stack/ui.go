package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiopts "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/openlayer-ai/workspace-service/harness/freeport"
	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// uiCommand is the first argument under which this binary serves the
// Temporal Web UI (compose's temporalio/ui, built from the same
// ui-server) as a process of its own. The UI server ends its process when
// it cannot listen, and in the stack's process that would skip every
// deferred stop and leave both PostgreSQL clusters running; in a child,
// it only ends the child, which startUI reports as an error.
const uiCommand = "temporal-ui"

// serveUI is the child: it serves until it is signalled.
func serveUI(args []string) error {
	fs := flag.NewFlagSet(uiCommand, flag.ContinueOnError)
	port := fs.Int("port", 0, "port on 127.0.0.1")
	temporal := fs.String("temporal", "", "Temporal frontend address (host:port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *port <= 0 || *temporal == "" {
		return errors.New("--port and --temporal are required")
	}
	ui := uiserver.NewServer(uiopts.WithConfigProvider(&uiconfig.Config{
		Host:                "127.0.0.1",
		Port:                *port,
		TemporalGRPCAddress: *temporal,
		EnableUI:            true,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}))
	return ui.Start()
}

// startUI runs the UI child on port (0: a free one, retried if another
// process takes it first) and waits until it serves. Its log is
// <dir>/temporal-ui.log; stop it with Terminate.
func startUI(ctx context.Context, dir string, port int, temporalAddr string) (*procstack.Proc, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	for try := 1; ; try++ {
		p := port
		if p == 0 {
			if p, err = freeport.Loopback(); err != nil {
				return nil, "", err
			}
		}
		url := "http://127.0.0.1:" + strconv.Itoa(p)
		ui := &procstack.Proc{
			Name: "temporal-ui", Bin: self, LogPath: filepath.Join(dir, "temporal-ui.log"),
			Args:       []string{uiCommand, "--port", strconv.Itoa(p), "--temporal", temporalAddr},
			ReadyCheck: func(ctx context.Context) error { return healthz(ctx, url) },
		}
		err := ui.Start(ctx, 30*time.Second)
		if err == nil {
			return ui, url, nil
		}
		exited := ui.PID() == 0
		_ = ui.Kill()
		if port != 0 || !exited || try == 3 || ctx.Err() != nil {
			return nil, "", fmt.Errorf("temporal web ui on port %d: %w", p, err)
		}
	}
}

func healthz(ctx context.Context, url string) error { return procstack.GetOK(ctx, url+"/healthz") }

// Package devprom runs a real Prometheus (Debian's prometheus package, or
// any prometheus binary on PATH) as a process, on the configuration file
// the compose deployment uses (deploy/prometheus/prometheus.yml) with each
// job's targets rewritten to loopback addresses, and reads it through its
// HTTP API. Tests and `make stack` use it; production never imports it.
//
//	p, err := devprom.Start(ctx, devprom.Options{
//		Targets: map[string][]string{"api": {apiAddr1, apiAddr2}, "worker": {workerAddr}},
//	})
//	defer p.Stop()
//	samples, err := p.Query(ctx, `up{job="api"}`)
package devprom

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/openlayer-ai/workspace-service/harness/freeport"
)

// ErrNoBinary: no prometheus binary is on PATH (make test and make stack
// install Debian's package; elsewhere: apt-get install prometheus).
var ErrNoBinary = errors.New("no prometheus binary on PATH (install Debian's prometheus package: apt-get install prometheus; the Makefile's prometheus target does)")

// Binary returns the path of the prometheus binary on PATH.
func Binary() (string, error) {
	path, err := exec.LookPath("prometheus")
	if err != nil {
		return "", ErrNoBinary
	}
	return path, nil
}

// Options configure Start.
type Options struct {
	// Targets maps each job of the configuration to the addresses
	// (host:port) it scrapes; jobs not named are dropped (see Rewrite).
	Targets map[string][]string
	// ConfigFile is the configuration to start from; empty: the
	// deployment's (FindConfig).
	ConfigFile string
	// ScrapeInterval, when not zero, replaces the scrape and rule
	// evaluation intervals (the deployment scrapes every 15 s; a test wants
	// series within a second or two).
	ScrapeInterval time.Duration
	// Dir receives the rewritten configuration, the storage and
	// prometheus.log; empty: a temporary folder that Stop removes.
	Dir string
	// Bin is the prometheus binary; empty: the one on PATH.
	Bin string
	// ReadyTimeout bounds the wait for /-/ready (default 30 s).
	ReadyTimeout time.Duration
}

// Prometheus is a running Prometheus process.
type Prometheus struct {
	// URL is its base address, http://127.0.0.1:port.
	URL string
	// Addr is its listen address, 127.0.0.1:port.
	Addr string
	// Dir holds the rewritten configuration (prometheus.yml), the storage
	// (data/) and its log (prometheus.log).
	Dir string

	api     promv1.API
	cmd     *exec.Cmd
	done    chan struct{}
	tempDir bool
}

// Start writes the rewritten configuration, starts Prometheus on a free
// loopback port and waits until it is ready.
func Start(ctx context.Context, o Options) (*Prometheus, error) {
	if o.Bin == "" {
		bin, err := Binary()
		if err != nil {
			return nil, err
		}
		o.Bin = bin
	}
	if o.ConfigFile == "" {
		path, err := FindConfig()
		if err != nil {
			return nil, err
		}
		o.ConfigFile = path
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	src, err := os.ReadFile(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	cfg, err := Rewrite(src, filepath.Dir(abs), o.Targets, o.ScrapeInterval)
	if err != nil {
		return nil, err
	}
	p := &Prometheus{Dir: o.Dir}
	if p.Dir == "" {
		if p.Dir, err = os.MkdirTemp("", "devprom-"); err != nil {
			return nil, err
		}
		p.tempDir = true
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(p.Dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		p.removeDir()
		return nil, err
	}
	// The port is free when chosen but may be taken before Prometheus
	// binds it; then it exits at once and another port is tried.
	for try := 0; ; try++ {
		err = p.start(ctx, o, cfgPath)
		if err == nil {
			return p, nil
		}
		p.kill()
		if try == 2 || ctx.Err() != nil || !errors.Is(err, errExited) {
			p.removeDir()
			return nil, err
		}
	}
}

var errExited = errors.New("prometheus exited")

func (p *Prometheus) start(ctx context.Context, o Options, cfgPath string) error {
	port, err := freeport.Loopback()
	if err != nil {
		return err
	}
	p.Addr = "127.0.0.1:" + strconv.Itoa(port)
	p.URL = "http://" + p.Addr
	logPath := filepath.Join(p.Dir, "prometheus.log")
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(o.Bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(p.Dir, "data"),
		"--web.listen-address="+p.Addr,
		"--storage.tsdb.retention.time=1d",
	)
	cmd.Stdout, cmd.Stderr = log, log
	// A test killed by its timeout must not leave Prometheus behind. A
	// process group of its own keeps a terminal's Ctrl-C, meant for the
	// program that started it (harness/cmd/stack), from reaching it: that program
	// stops it in its own order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", o.Bin, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	client, err := promapi.NewClient(promapi.Config{Address: p.URL})
	if err != nil {
		return err
	}
	p.api = promv1.NewAPI(client)
	return p.waitReady(ctx, o.ReadyTimeout, logPath)
}

// waitReady polls /-/ready until it answers 200.
func (p *Prometheus) waitReady(ctx context.Context, timeout time.Duration, logPath string) error {
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/-/ready", nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%w before it was ready; see %s", errExited, logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("prometheus not ready within %v; see %s", timeout, logPath)
		}
	}
}

// Stop ends Prometheus (SIGTERM, then SIGKILL after 10 s) and removes its
// folder if Start made it.
func (p *Prometheus) Stop() {
	p.kill()
	p.removeDir()
}

func (p *Prometheus) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	p.cmd = nil
}

func (p *Prometheus) removeDir() {
	if p.tempDir {
		_ = os.RemoveAll(p.Dir)
	}
}

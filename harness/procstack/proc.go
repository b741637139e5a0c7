// Package procstack runs the service as real, separate processes on
// loopback: a throwaway PostgreSQL cluster (harness/devpg), a Temporal
// server, the migrations, the api and the worker, each from its built
// binary. The Temporal server is either devtemporal (the embedded server as
// its own process, on a SQLite file: quick to build, for the fault suite
// and the benchmark) or, with Options.TemporalServer, the production
// topology of docker-compose.yml: Temporal's own server built from the
// module proxy on a second PostgreSQL cluster, its schema applied by
// Temporal's SQL tool, and any number of api and worker processes (harness/cmd/stack,
// make stack). Every process gets the environment compose gives it, with
// loopback addresses (env.go; a test compares the two). It reads what each
// process costs from /proc (CPU seconds, resident memory, the PostgreSQL
// cluster's backends summed).
//
// The fault suite (harness/reliability) kills and restarts these
// processes; the benchmark (harness/bench, make bench) measures them. It
// is a dev and test tool: production never imports it.
package procstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is one of the service's processes (api, worker, a Temporal
// server), run from its built binary. It can be started again after it
// ended, however it ended; every start appends to the same log file, after
// a marker line.
type Proc struct {
	Name string
	Bin  string
	Args []string
	Env  []string // added to the environment of this process
	// DebugAddr serves the process's net/http/pprof (Options.Debug).
	DebugAddr string
	LogPath   string
	// Ready is a line the process writes once it serves (empty: none).
	Ready string
	// ReadyCheck, when set, is called until it returns nil (after Ready
	// was seen): for a process whose log says nothing reliable about
	// serving, such as Temporal's server.
	ReadyCheck func(context.Context) error

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current run ended
	err    error         // its exit status
	starts int
	offset int64 // where the current run's output begins in the log
}

// Start runs the process and waits until its log shows p.Ready and
// p.ReadyCheck passes, for up to timeout. When ctx ends first (Ctrl-C
// during harness/cmd/stack's startup) it returns ctx's error at once, leaving the
// process running for the caller's Stop, like every other error after the
// process started.
func (p *Proc) Start(ctx context.Context, timeout time.Duration) error {
	p.mu.Lock()
	if p.cmd != nil && !p.exited() {
		p.mu.Unlock()
		return fmt.Errorf("%s: already running (pid %d)", p.Name, p.cmd.Process.Pid)
	}
	f, err := os.OpenFile(p.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	p.starts++
	fmt.Fprintf(f, "===== procstack: start #%d of %s at %s\n", p.starts, p.Name, time.Now().Format(time.RFC3339Nano))
	if st, err := f.Stat(); err == nil {
		p.offset = st.Size()
	}
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	// A harness killed by a timeout must not leave servers behind; and
	// a process group of its own keeps a terminal's Ctrl-C from reaching
	// the process before the harness stops it, in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		p.mu.Unlock()
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err = cmd, done, nil
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	p.mu.Unlock()
	begin := time.Now()
	if p.Ready != "" {
		if err := p.WaitLog(ctx, p.Ready, timeout); err != nil {
			return err
		}
	}
	if p.ReadyCheck != nil {
		return p.waitCheck(ctx, timeout-time.Since(begin))
	}
	return nil
}

// waitCheck calls p.ReadyCheck until it succeeds, the process exits,
// timeout passes or ctx ends.
func (p *Proc) waitCheck(ctx context.Context, timeout time.Duration) error {
	bounded, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	for {
		attempt, cancelAttempt := context.WithTimeout(bounded, 5*time.Second)
		err := p.ReadyCheck(attempt)
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited (%v) before it was ready (%v); see %s", p.Name, p.ExitErr(), err, p.LogPath)
		case <-bounded.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("%s: waiting until ready: %w", p.Name, ctx.Err())
			}
			return fmt.Errorf("%s not ready within %v: %w; see %s", p.Name, timeout, err, p.LogPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (p *Proc) exited() bool {
	if p.done == nil {
		return true
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitLog waits until the current run has written a line containing s,
// for up to timeout or until ctx ends.
func (p *Proc) WaitLog(ctx context.Context, s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		done, offset := p.done, p.offset
		p.mu.Unlock()
		if b, err := os.ReadFile(p.LogPath); err == nil && int64(len(b)) >= offset &&
			bytes.Contains(b[offset:], []byte(s)) {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited (%v) before logging %q; see %s", p.Name, p.ExitErr(), s, p.LogPath)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not log %q within %v; see %s", p.Name, s, timeout, p.LogPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for %q: %w", p.Name, s, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ExitErr is how the last run ended (nil while it runs, or on exit 0).
func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// PID is the running process's id, 0 when none runs.
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s (pid %d) still alive 30s after SIGKILL", p.Name, cmd.Process.Pid)
	}
}

// ErrStillRunning: the process outlived the bound given to Terminate.
var ErrStillRunning = errors.New("still running")

// Terminate sends SIGTERM and waits up to bound for the process to exit,
// returning how long it took. Past bound it is killed and ErrStillRunning
// returned.
func (p *Proc) Terminate(bound time.Duration) (time.Duration, error) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return 0, nil
	}
	begin := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return time.Since(begin), nil
	case <-time.After(bound):
		_ = p.Kill()
		return time.Since(begin), fmt.Errorf("%s: %w %v after SIGTERM (then killed)", p.Name, ErrStillRunning, bound)
	}
}

// Signal sends sig (SIGSTOP, SIGCONT) to the running process.
func (p *Proc) Signal(sig syscall.Signal) error {
	pid := p.PID()
	if pid == 0 {
		return fmt.Errorf("%s is not running", p.Name)
	}
	return syscall.Kill(pid, sig)
}

// RSSMiB reads the resident set size of the running process.
func (p *Proc) RSSMiB() (float64, error) {
	pid := p.PID()
	if pid == 0 {
		return 0, fmt.Errorf("%s is not running", p.Name)
	}
	u, err := ReadUsage(pid)
	return u.RSSMiB, err
}

// Usage reads the running process's CPU time and resident memory.
func (p *Proc) Usage() (Usage, error) {
	pid := p.PID()
	if pid == 0 {
		return Usage{}, fmt.Errorf("%s is not running", p.Name)
	}
	return ReadUsage(pid)
}

package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one of the service's processes (api, worker, devtemporal), run
// from its built binary. It can be started again after it ended, however it
// ended; every start appends to the same log file, after a marker line.
type proc struct {
	name    string
	bin     string
	args    []string
	env     []string
	logPath string
	// ready is a line the process writes once it serves.
	ready string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current run ended
	err    error         // its exit status
	starts int
	offset int64 // where the current run's output begins in the log
}

// start runs the process and waits until its log shows p.ready.
func (p *proc) start(timeout time.Duration) error {
	p.mu.Lock()
	if p.cmd != nil && !p.exited() {
		p.mu.Unlock()
		return fmt.Errorf("%s: already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	f, err := os.OpenFile(p.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	p.starts++
	fmt.Fprintf(f, "===== reliability: start #%d of %s at %s\n", p.starts, p.name, time.Now().Format(time.RFC3339Nano))
	if st, err := f.Stat(); err == nil {
		p.offset = st.Size()
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	// A test binary killed by a timeout must not leave servers behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		p.mu.Unlock()
		return fmt.Errorf("%s: %w", p.name, err)
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
	return p.waitLog(p.ready, timeout)
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitLog waits until the current run has written a line containing s.
func (p *proc) waitLog(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		done, offset := p.done, p.offset
		p.mu.Unlock()
		if b, err := os.ReadFile(p.logPath); err == nil && int64(len(b)) >= offset &&
			bytes.Contains(b[offset:], []byte(s)) {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited (%v) before logging %q; see %s", p.name, p.exitErr(), s, p.logPath)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not log %q within %v; see %s", p.name, s, timeout, p.logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// pid is the running process's id, 0 when none runs.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.exited() {
		return 0
	}
	return p.cmd.Process.Pid
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() error {
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
		return fmt.Errorf("%s (pid %d) still alive 30s after SIGKILL", p.name, cmd.Process.Pid)
	}
}

// errStillRunning: the process outlived the bound given to terminate.
var errStillRunning = errors.New("still running")

// terminate sends SIGTERM and waits up to bound for the process to exit,
// returning how long it took. Past bound it is killed and errStillRunning
// returned.
func (p *proc) terminate(bound time.Duration) (time.Duration, error) {
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
		_ = p.kill()
		return time.Since(begin), fmt.Errorf("%s: %w %v after SIGTERM (then killed)", p.name, errStillRunning, bound)
	}
}

// signal sends sig (SIGSTOP, SIGCONT) to the running process.
func (p *proc) signal(sig syscall.Signal) error {
	pid := p.pid()
	if pid == 0 {
		return fmt.Errorf("%s is not running", p.name)
	}
	return syscall.Kill(pid, sig)
}

// rssMiB reads the resident set size of the running process.
func (p *proc) rssMiB() (float64, error) {
	pid := p.pid()
	if pid == 0 {
		return 0, fmt.Errorf("%s is not running", p.name)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) >= 1 {
				kb, err := strconv.ParseFloat(f[0], 64)
				return kb / 1024, err
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

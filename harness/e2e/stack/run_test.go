package stack_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// stackRun is harness/cmd/stack running as a process of its own.
type stackRun struct {
	cmd  *exec.Cmd
	out  string // its standard output and error
	done chan struct{}
	err  error // how it exited, once done is closed
	m    procstack.Manifest
}

// startStack runs harness/cmd/stack on dir and waits for its manifest.
func startStack(t *testing.T, bin, dir string, args ...string) *stackRun {
	t.Helper()
	r := launchStack(t, bin, dir, args...)
	manifest := filepath.Join(dir, "stack.json")
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if m, err := procstack.ReadManifest(manifest); err == nil {
			r.m = m
			return r
		}
		select {
		case <-r.done:
			t.Fatalf("stack exited (%v) before writing %s:\n%s", r.err, manifest, r.tail())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 5 minutes:\n%s", manifest, r.tail())
		}
	}
}

// launchStack runs harness/cmd/stack on dir. Whatever happens, the test's
// clean-up sends it SIGINT (SIGKILL if it outlives that by 2 minutes),
// then stops any PostgreSQL cluster of dir still running, so that a
// failed run leaves no server behind.
func launchStack(t *testing.T, bin, dir string, args ...string) *stackRun {
	t.Helper()
	t.Cleanup(func() {
		// Runs after the stop below (clean-ups run last first).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := procstack.HaltClusters(ctx, dir); err != nil {
			t.Errorf("stop the clusters left in %s: %v", dir, err)
		}
	})
	r := &stackRun{out: dir + ".out", done: make(chan struct{})}
	f, err := os.Create(r.out)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(filepath.Join(bin, "stack"), append([]string{"--prebuilt", "--bin", bin, "--dir", dir}, args...)...)
	r.cmd.Stdout, r.cmd.Stderr = f, f
	// Its own process group, as in a terminal: signals reach it only when
	// the test sends them; and it dies with the test.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		f.Close()
		close(r.done)
	}()
	t.Cleanup(func() {
		if r.stop(2*time.Minute) != nil {
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// stop sends SIGINT (Ctrl-C) and waits up to bound for the stack to exit.
func (r *stackRun) stop(bound time.Duration) error {
	select {
	case <-r.done:
		return r.err
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.done:
		return r.err
	case <-time.After(bound):
		return fmt.Errorf("stack still running %v after SIGINT", bound)
	}
}

func (r *stackRun) tail() string {
	b, _ := os.ReadFile(r.out)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// processesUsing lists the live processes whose command line names dir
// (PostgreSQL's -D, Prometheus's --config.file): what a stack that
// stopped badly would leave.
func processesUsing(dir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(dir)) && procstack.Alive(pid) {
			found = append(found, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return found
}

// environ reads a live process's environment.
func environ(pid int) (map[string]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("empty environment")
	}
	return procstack.EnvMap(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")), nil
}

package procstack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ClearDir empties only a run's folder: a folder of unrelated files (a
// mistyped --dir) is refused and left as it was.
func TestClearDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(path string) bool { _, err := os.Stat(path); return err == nil }

	// Someone's files: refused, kept.
	home := filepath.Join(root, "home")
	write(filepath.Join(home, "notes.txt"))
	err := ClearDir(ctx, home)
	if err == nil || !strings.Contains(err.Error(), "refusing to empty it") {
		t.Errorf("a folder of unrelated files: %v, want a refusal", err)
	}
	if !exists(filepath.Join(home, "notes.txt")) {
		t.Fatal("ClearDir deleted a file of a folder that was not a run's")
	}

	// A new folder and an empty one become marked run folders.
	for _, dir := range []string{filepath.Join(root, "new", "run"), filepath.Join(root, "empty")} {
		if dir == filepath.Join(root, "empty") {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := ClearDir(ctx, dir); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !exists(filepath.Join(dir, RunMarker)) {
			t.Errorf("%s: no %s after ClearDir", dir, RunMarker)
		}
	}

	// Files named like the stack's own (stack.json, a folder called like
	// the marker) prove nothing: refused, kept.
	for _, fake := range []string{"stack.json", filepath.Join(RunMarker, "x")} {
		dir := filepath.Join(root, "fake-"+filepath.Base(filepath.Dir(fake))+filepath.Base(fake))
		write(filepath.Join(dir, fake))
		write(filepath.Join(dir, "dummy.txt"))
		if err := ClearDir(ctx, dir); err == nil || !strings.Contains(err.Error(), "refusing to empty it") {
			t.Errorf("a folder holding %s: %v, want a refusal", fake, err)
		}
		if !exists(filepath.Join(dir, "dummy.txt")) {
			t.Fatalf("ClearDir deleted a folder that only held a %s", fake)
		}
	}

	// A run's folder (marked) is emptied.
	dir := filepath.Join(root, "run")
	write(filepath.Join(dir, RunMarker))
	write(filepath.Join(dir, "api-1.log"))
	write(filepath.Join(dir, "postgres", "PG_VERSION"))
	if err := ClearDir(ctx, dir); err != nil {
		t.Fatalf("a marked run folder: %v", err)
	}
	if exists(filepath.Join(dir, "api-1.log")) || exists(filepath.Join(dir, "postgres")) {
		t.Error("a marked run folder was not emptied")
	}
}

// A run folder whose marker names a process still running (a live
// `make stack`) is refused and kept; once that process has ended, or when
// its PID now belongs to a process started later, it is emptied.
func TestClearDirRefusesLiveRun(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "run")
	if err := ClearDir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	// The marker ClearDir wrote names this test process, which runs.
	log := filepath.Join(dir, "api-1.log")
	if err := os.WriteFile(log, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := ClearDir(ctx, dir)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("a run still going (process %d)", os.Getpid())) {
		t.Errorf("a folder whose run is live: %v, want a refusal naming process %d", err, os.Getpid())
	}
	if _, err := os.Stat(log); err != nil {
		t.Fatal("ClearDir emptied the folder of a live run")
	}

	// A run whose process has ended: emptied.
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	start, err := startTime(sleep.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	marker := func(pid int, start uint64) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, RunMarker), fmt.Appendf(nil, "pid %d start %d\n", pid, start), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(log, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	marker(sleep.Process.Pid, start)
	if err := ClearDir(ctx, dir); err == nil {
		t.Error("a folder whose run (sleep) is live was emptied")
	}
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	if err := ClearDir(ctx, dir); err != nil {
		t.Errorf("a folder whose run has ended: %v", err)
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("the folder of an ended run was not emptied")
	}

	// This process's PID with another start time: a PID reused by a
	// later process is no live run.
	mine, err := startTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	marker(os.Getpid(), mine+1)
	if err := ClearDir(ctx, dir); err != nil {
		t.Errorf("a marker whose PID was reused: %v", err)
	}
}

package procstack

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openlayer-ai/workspace-service/harness/devpg"
)

// The data folders of the two clusters inside a run folder.
const (
	appPGDir      = "postgres"
	temporalPGDir = "temporal-postgres"
)

// RunMarker is the file ClearDir leaves in a run folder, so that a later
// ClearDir knows the folder is a run's and may empty it.
const RunMarker = "procstack-run"

// ClearDir makes dir an empty run folder: it creates it, or empties a run
// folder left by an earlier run, then writes RunMarker in it, naming the
// calling process (its PID and start time). A run folder whose marker
// names a process still running is refused: a second `make stack` on the
// same --dir would halt the live run's clusters and delete its data. A
// folder
// that holds anything but is not a run's (no RunMarker file: a mistyped
// --dir, say $HOME) is left untouched, and ClearDir fails. Only the marker
// counts: a file named like one the stack writes (stack.json, a log) is
// common enough elsewhere to be no proof.
//
// The stack's own processes die with the process that started them
// (Pdeathsig), but PostgreSQL detaches from it: a run that was killed
// leaves its clusters running, and they are stopped here first.
func ClearDir(ctx context.Context, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(entries) > 0 && !isRun(dir) {
		return fmt.Errorf("%s is not empty and is not an earlier run's folder (it has no %s file): refusing to empty it; name an empty or new folder",
			dir, RunMarker)
	}
	if pid, ok := liveRun(dir); ok {
		return fmt.Errorf("%s is the folder of a run still going (process %d): refusing to empty it; stop that run first (Ctrl-C) or name another folder",
			dir, pid)
	}
	if err := HaltClusters(ctx, dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	// 0755: the PostgreSQL server user must traverse it.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, RunMarker), fmt.Appendf(nil,
		"A run folder of harness/cmd/stack (make stack): its next run empties it, once this run's process has ended.\npid %d start %d\n",
		pid, start), 0o644)
}

// liveRun returns the process dir's marker names when that process still
// runs. The start time tells it from a later process given the same PID.
// A marker naming none (older runs wrote none) names no live run.
func liveRun(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, RunMarker))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		var pid int
		var start uint64
		if n, _ := fmt.Sscanf(line, "pid %d start %d", &pid, &start); n != 2 {
			continue
		}
		now, err := startTime(pid)
		return pid, err == nil && now == start
	}
	return 0, false
}

// startTime is when process pid started, in clock ticks since boot
// (field 22 of /proc/<pid>/stat).
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces or parentheses itself; field 3 comes first.
	stat := string(b)
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// isRun reports whether dir holds RunMarker as a regular file (not a
// folder or a link someone made with that name).
func isRun(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, RunMarker))
	return err == nil && fi.Mode().IsRegular()
}

// HaltClusters stops at once (devpg.Halt) any PostgreSQL cluster of the
// run folder dir still running, as a run that was killed leaves them.
func HaltClusters(ctx context.Context, dir string) error {
	for _, sub := range []string{appPGDir, temporalPGDir} {
		if err := devpg.Halt(ctx, filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	return nil
}

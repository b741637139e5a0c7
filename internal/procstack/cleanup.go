package procstack

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/openlayer-ai/workspace-service/internal/devpg"
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
// folder left by an earlier run, then writes RunMarker in it. A folder
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
	return os.WriteFile(filepath.Join(dir, RunMarker),
		[]byte("A run folder of cmd/stack (make stack): its next run empties it.\n"), 0o644)
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

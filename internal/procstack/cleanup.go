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

// manifestFile is what cmd/stack writes once a run is up; a folder holding
// one is a run's even without RunMarker (runs made before it existed).
const manifestFile = "stack.json"

// ClearDir makes dir an empty run folder: it creates it, or empties a run
// folder left by an earlier run, then writes RunMarker in it. A folder
// that holds anything but is not a run's (no RunMarker, no stack.json: a
// mistyped --dir, say $HOME) is left untouched, and ClearDir fails.
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
		return fmt.Errorf("%s is not empty and is not an earlier run's folder (it has no %s or %s): refusing to empty it; name an empty or new folder",
			dir, RunMarker, manifestFile)
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

func isRun(dir string) bool {
	for _, name := range []string{RunMarker, manifestFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
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

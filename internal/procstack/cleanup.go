package procstack

import (
	"context"
	"errors"
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

// ClearDir removes a run folder left by an earlier run. The stack's own
// processes die with the process that started them (Pdeathsig), but
// PostgreSQL detaches from it: a run that was killed leaves its clusters
// running, and they are stopped here first.
func ClearDir(ctx context.Context, dir string) error {
	for _, sub := range []string{appPGDir, temporalPGDir} {
		data := filepath.Join(dir, sub)
		if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		// devpg.Start stops a server still running on its data folder
		// before starting it again.
		pg, err := devpg.Start(ctx, devpg.Options{Dir: data, LogFile: filepath.Join(dir, sub+".log")})
		if err != nil {
			return err
		}
		if err := pg.Stop(); err != nil {
			return err
		}
	}
	return os.RemoveAll(dir)
}

package procstack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Binaries are the commands BuildBinaries builds and Start runs.
var Binaries = []string{"api", "worker", "admin", "devtemporal"}

// ServerBinaries are Temporal's own commands BuildServerBinaries builds,
// by binary name: the server and its SQL schema tool, at the version
// go.mod pins (its tool directive keeps their dependencies in go.sum).
// The names are those of Temporal's images.
var ServerBinaries = map[string]string{
	"temporal-server":   "go.temporal.io/server/cmd/server",
	"temporal-sql-tool": "go.temporal.io/server/cmd/tools/sql",
}

// BuildBinaries builds the api, worker, admin and devtemporal commands into
// dir; go build relinks only what changed, so a kept dir makes later runs
// quick.
func BuildBinaries(dir string) error { return BuildCommands(dir, Binaries...) }

// BuildServerBinaries builds what a stack with TemporalServer runs into
// dir: the api, worker and admin commands and ServerBinaries. The first
// build compiles the Temporal server (minutes on two cores); later ones
// are incremental. Ending ctx ends the build (a SIGTERM to harness/cmd/stack must
// not wait minutes for it).
func BuildServerBinaries(ctx context.Context, dir string) error {
	if err := buildCommands(ctx, dir, serviceCommands...); err != nil {
		return err
	}
	for name, pkg := range ServerBinaries {
		if err := goBuild(ctx, filepath.Join(dir, name), pkg); err != nil {
			return err
		}
	}
	return nil
}

// BuildCommands builds each named command into dir: the service's from
// ./cmd, the harness's (devtemporal, stack, ...) from ./harness/cmd.
func BuildCommands(dir string, names ...string) error {
	return buildCommands(context.Background(), dir, names...)
}

func buildCommands(ctx context.Context, dir string, names ...string) error {
	pkgs := make([]string, 0, len(names))
	for _, n := range names {
		pkgs = append(pkgs, commandPackage(n))
	}
	return goBuild(ctx, dir+string(os.PathSeparator), pkgs...)
}

// serviceCommands are the commands that ship; every other lives in the
// harness.
var serviceCommands = []string{"api", "worker", "admin"}

func commandPackage(name string) string {
	if slices.Contains(serviceCommands, name) {
		return "./cmd/" + name
	}
	return "./harness/cmd/" + name
}

// goBuild runs go build -o out pkgs... in the module root.
func goBuild(ctx context.Context, out string, pkgs ...string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	return goBuildIn(ctx, root, out, pkgs...)
}

// goBuildIn runs go build -o out pkgs... in the module of folder dir.
func goBuildIn(ctx context.Context, dir, out string, pkgs ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", out}, pkgs...)...)
	cmd.Dir = dir
	// Killed, go leaves its compilers holding the output pipe a moment.
	cmd.WaitDelay = time.Second
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, b)
	}
	return nil
}

// ModuleRoot is the repository's root folder (the main module's).
func ModuleRoot() (string, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	return strings.TrimSpace(string(root)), nil
}

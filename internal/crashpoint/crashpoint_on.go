//go:build crashpoints

package crashpoint

import (
	"os"
	"syscall"
)

// point is the crash point this process dies at, read once at start-up.
var point = os.Getenv("WORKSPACE_CRASHPOINT")

// Hit SIGKILLs the process when name is WORKSPACE_CRASHPOINT: no deferred
// call, no flush, no goodbye to PostgreSQL, as when the kernel or an
// operator kills it.
func Hit(name string) {
	if point != "" && name == point {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}

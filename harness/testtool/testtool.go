// Package testtool holds the one rule for a test that needs a program
// the Makefile installs from Debian (prometheus and promtool,
// docker-compose) and does not find it: under CI (CI set) or a make
// target (make sets MAKELEVEL for its recipes), which install the program
// first, its absence is a failure; under a bare `go test` the test is
// skipped with a message saying it did not pass.
package testtool

import (
	"os"
	"testing"
)

// Required reports whether a missing program fails a test rather than
// skipping it.
func Required() bool { return os.Getenv("CI") != "" || os.Getenv("MAKELEVEL") != "" }

// Missing ends t because of err, which says what program is missing and
// how to install it: a failure where Required, a loud skip elsewhere.
func Missing(t testing.TB, err error) {
	t.Helper()
	if Required() {
		t.Fatalf("%v (required under CI and make, which install it)", err)
	}
	t.Skipf("SKIPPED, NOT PASSED: %v; `make test` installs it", err)
}

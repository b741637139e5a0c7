package devprom_test

import (
	"os"
	"testing"

	"github.com/openlayer-ai/workspace-service/internal/devprom"
)

// requirePrometheus returns the prometheus binary's path. Without one the
// test is skipped, loudly, except in CI (CI=true), where `make test` has
// installed Debian's package and a missing binary is a failure.
func requirePrometheus(t *testing.T) string {
	t.Helper()
	bin, err := devprom.Binary()
	if err == nil {
		return bin
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI: %v", err)
	}
	t.Skipf("SKIPPED, NOT PASSED: %v. `make test` installs it.", err)
	return ""
}

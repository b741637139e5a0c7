package devprom

import (
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/testtool"
)

// RequireBinary returns the prometheus binary's path for a test that
// runs it; without one, the test fails or is skipped as testtool.Missing
// decides.
func RequireBinary(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		testtool.Missing(t, err)
	}
	return bin
}

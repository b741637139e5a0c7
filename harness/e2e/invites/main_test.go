package invites_test

import (
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
)

// TestMain is the one TestMain of this test binary: it stops the shared
// embedded Temporal server and PostgreSQL cluster when the tests end.
func TestMain(m *testing.M) { testenv.Main(m) }

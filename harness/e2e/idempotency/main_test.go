package idempotency_test

import (
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
)

// TestMain stops the PostgreSQL cluster pgtest starts when the tests end.
func TestMain(m *testing.M) { pgtest.Main(m) }

package portal_test

import (
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

package store_test

import (
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
)

// TestMain is the one TestMain of the store test binary (a package and its
// _test package may hold only one between them): every test here gets its
// own migrated database from pgtest.
func TestMain(m *testing.M) { pgtest.Main(m) }

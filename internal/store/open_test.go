package store_test

import (
	"context"
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// A transaction left idle by a vanished host (holding an Idempotency-Key's
// row) ends after 30 s, whatever the server's default.
func TestOpenBoundsIdleTransactions(t *testing.T) {
	db, err := store.Open(pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.NewRaw("SHOW idle_in_transaction_session_timeout").Scan(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if got != "30s" {
		t.Fatalf("idle_in_transaction_session_timeout = %q, want 30s", got)
	}
}

package store_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// A transaction left idle by a vanished host (holding an Idempotency-Key's
// row) ends after 30 s, whatever the server's default.
func TestOpenBoundsIdleTransactions(t *testing.T) {
	db, err := store.Open(pgtest.NewURL(t), 0)
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

// DATABASE_URL may set the service's own session parameters, and wins: an
// operator can change them without a release (pgdriver's WithConnParams
// dropped the URL's). libpq's client-side parameters, which
// the server does not know, still do not reach it.
func TestOpenKeepsTheURLsParameters(t *testing.T) {
	u, err := url.Parse(pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("idle_in_transaction_session_timeout", "1min")
	q.Set("target_session_attrs", "read-write")
	u.RawQuery = q.Encode()
	db, err := store.Open(u.String(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name, want := range map[string]string{"idle_in_transaction_session_timeout": "1min"} {
		var got string
		if err := db.NewRaw("SELECT current_setting(?)", name).Scan(context.Background(), &got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// A process never holds more than DATABASE_MAX_CONNS connections, however
// many requests wait: the database's max_connections is sized from it
// (docs/deployment.md#database-connections), and a pool that grew past it
// would make PostgreSQL refuse other replicas' connections.
func TestOpenBoundsConnections(t *testing.T) {
	const limit = 3
	url := pgtest.NewURL(t)
	db, err := store.Open(url, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 * limit {
		wg.Go(func() {
			if _, err := db.ExecContext(ctx, "SELECT pg_sleep(0.2)"); err != nil {
				t.Error(err)
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	watch, err := store.Open(url, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	var sleeping int
	if err := watch.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = 'SELECT pg_sleep(0.2)'").Scan(ctx, &sleeping); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if sleeping != limit {
		t.Errorf("%d connections ran queries at once, want the bound, %d", sleeping, limit)
	}
	if got := db.Stats().OpenConnections; got > limit {
		t.Errorf("pool holds %d connections, want at most %d", got, limit)
	}
}

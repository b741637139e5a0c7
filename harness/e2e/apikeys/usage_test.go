package apikeys_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
)

// usageRequests is the burst TestUsageWritesPerBurst sends.
const usageRequests = 1000

// A burst of authenticated requests with one key, through the real API
// process over HTTP, writes the key's row once: dateLastUsed is recorded at
// most once a minute. A trigger counts every UPDATE of api_keys. The count
// is logged for docs/benchmarks.md (API key authentication):
//
//	go test -v -run TestUsageWritesPerBurst ./harness/e2e/apikeys
func TestUsageWritesPerBurst(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE test_key_writes (n int NOT NULL)`,
		`INSERT INTO test_key_writes VALUES (0)`,
		`CREATE FUNCTION test_count_key_write() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE test_key_writes SET n = n + 1; RETURN NEW; END $$`,
		`CREATE TRIGGER test_count_key_write AFTER UPDATE ON api_keys
			FOR EACH ROW EXECUTE FUNCTION test_count_key_write()`,
	} {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	writes := func() (n int) {
		if err := env.DB.QueryRowContext(ctx, "SELECT n FROM test_key_writes").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	lastUsed := func() (at *time.Time) {
		if err := env.DB.QueryRowContext(ctx, "SELECT date_last_used FROM api_keys WHERE id = ?", env.AdminKeyID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}

	start := time.Now()
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < usageRequests; i += 10 {
				if status, body := env.Do(t, http.MethodGet, keys(env), env.AdminKey, nil); status != http.StatusOK {
					t.Errorf("request %d: %d %s", i, status, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for deadline := time.Now().Add(10 * time.Second); lastUsed() == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("dateLastUsed was never written")
		}
	}
	time.Sleep(300 * time.Millisecond) // let any stray queued write land before counting
	n := writes()
	t.Logf("%d authenticated requests with one key in %v: %d write(s) of the api_keys row", usageRequests, elapsed.Round(time.Millisecond), n)
	if n != 1 {
		t.Fatalf("%d requests wrote the key %d times, want 1", usageRequests, n)
	}
}

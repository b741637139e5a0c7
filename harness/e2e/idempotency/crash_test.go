package idempotency_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/freeport"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/harness/procstack"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// A publisher re-sends an event with the same Idempotency-Key until it
// gets a 202. The api is SIGKILLed during the first send, before its
// transaction commits and after: the retry, to the restarted api, is
// answered at once (not 409 for a claim left behind), as a new event when
// nothing had committed and as the committed event, replayed, when it had.
func TestCrashDuringIdempotentPublish(t *testing.T) {
	bin := buildCrashpointAPI(t)
	dsn := pgtest.NewURL(t)
	db, err := store.Open(dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := store.New(db)
	ctx := context.Background()
	creds, err := st.Bootstrap(ctx, "Crash", "crash@idempotency.test")
	if err != nil {
		t.Fatal(err)
	}
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	nowhere, err := freeport.Loopback() // Temporal: publishing never calls it
	if err != nil {
		t.Fatal(err)
	}
	base := []string{
		"DATABASE_URL=" + dsn,
		"HTTP_ADDR=127.0.0.1:" + strconv.Itoa(port),
		"TEMPORAL_ADDRESS=127.0.0.1:" + strconv.Itoa(nowhere),
	}
	api := &procstack.Proc{Name: "api", Bin: bin, LogPath: filepath.Join(t.TempDir(), "api.log"), Ready: `"api listening"`}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/workspaces/%s/events", port, creds.WorkspaceID)
	publish := func(key string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"type":"test.created","data":{"n":1}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+creds.Secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		return (&http.Client{Timeout: 10 * time.Second}).Do(req)
	}

	for _, tc := range []struct {
		point     string
		committed bool // the first send's event committed before the kill
	}{
		{point: "idempotency-before-commit"},
		{point: "idempotency-after-commit", committed: true},
	} {
		t.Run(tc.point, func(t *testing.T) {
			t.Cleanup(func() { _ = api.Kill() })
			before := count(t, st, "events")
			api.Env = append(base, "WORKSPACE_CRASHPOINT="+tc.point)
			if err := api.Start(ctx, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			if resp, err := publish(tc.point); err == nil {
				resp.Body.Close()
				t.Fatalf("the first send was answered %d; the api should have died at %s", resp.StatusCode, tc.point)
			}
			waitKilled(t, api)
			killed := count(t, st, "events") - before // committed by the killed request

			api.Env = base
			if err := api.Start(ctx, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := publish(tc.point)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct{ ID uuid.UUID }
			if resp.StatusCode != http.StatusAccepted || json.NewDecoder(resp.Body).Decode(&body) != nil {
				t.Fatalf("the retry got %d (Retry-After %q) after %v; want 202 at once",
					resp.StatusCode, resp.Header.Get("Retry-After"), time.Since(start))
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("the retry took %v", took)
			}
			if want := map[bool]int{false: 0, true: 1}[tc.committed]; killed != want {
				t.Fatalf("%d events committed by the killed request, want %d", killed, want)
			}
			if replayed := resp.Header.Get("Idempotent-Replayed") == "true"; replayed != tc.committed {
				t.Fatalf("Idempotent-Replayed %v, want %v", replayed, tc.committed)
			}
			if n := count(t, st, "events") - before; n != 1 {
				t.Fatalf("%d events, want the one the publisher's retries made", n)
			}
			if n, err := st.DB().NewSelect().TableExpr("events").Where("id = ?", body.ID).Count(ctx); err != nil || n != 1 {
				t.Fatalf("the retry's event %s: %d rows (%v)", body.ID, n, err)
			}
		})
	}
}

// buildCrashpointAPI builds cmd/api with the crashpoints tag, into
// E2E_BIN (make test keeps it there) or a temporary folder.
func buildCrashpointAPI(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("E2E_BIN")
	if dir == "" {
		dir = t.TempDir()
	}
	root, err := procstack.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "api-crashpoints")
	cmd := exec.Command("go", "build", "-tags", "crashpoints", "-o", bin, "./cmd/api")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags crashpoints ./cmd/api: %v\n%s", err, out)
	}
	return bin
}

// waitKilled waits until the api has died of SIGKILL.
func waitKilled(t *testing.T, api *procstack.Proc) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); api.PID() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the api is still running after its crash point")
		}
	}
	if err := api.ExitErr(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the api ended with %v, want SIGKILL", err)
	}
}

func count(t *testing.T, st *store.Store, table string) int {
	t.Helper()
	n, err := st.DB().NewSelect().TableExpr(table).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

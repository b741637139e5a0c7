package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// BenchmarkAuthenticate measures what authentication costs a request,
// against a real PostgreSQL (pgtest's local cluster):
//
//   - lookup: the path alone: SHA-256 of the token, the CredentialByHash
//     query, the constant-time check at the server's clock.
//   - router: a whole authenticated request through the real router
//     (request id, logging, metrics, authentication, workspace check) to
//     GET /v1/workspaces/{id}/api-keys/{id}, which adds one primary-key read.
//
// Run: go test -run '^$' -bench Authenticate -benchmem ./api
func BenchmarkAuthenticate(b *testing.B) {
	st := store.New(pgtest.NewDB(b))
	creds, err := st.Bootstrap(context.Background(), "Bench", "bench-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		b.Fatal(err)
	}
	deps := api.Deps{Config: config.Defaults(), Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	noRateLimits(&deps) // b.Loop runs far past any budget
	srv := api.New(deps)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })

	b.Run("lookup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := srv.AuthenticateForTest(context.Background(), creds.Secret); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("router", func(b *testing.B) {
		url := "/v1/workspaces/" + creds.WorkspaceID.String() + "/api-keys/" + creds.APIKeyID.String()
		b.ReportAllocs()
		for b.Loop() {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+creds.Secret)
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
}

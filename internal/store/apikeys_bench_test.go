package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// BenchmarkCredentialByHash is the database half of authentication: one
// query that probes the two unique hash indexes and joins the membership.
// Other keys in the table make the index probes realistic.
//
// Run: go test -run '^$' -bench CredentialByHash -benchmem ./internal/store
func BenchmarkCredentialByHash(b *testing.B) {
	st := store.New(pgtest.NewDB(b))
	ctx := context.Background()
	creds, err := st.Bootstrap(ctx, "Bench", "bench-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		b.Fatal(err)
	}
	for range 200 {
		if _, err := st.AddMember(ctx, creds.WorkspaceID, uuid.NewString()[:8]+"@acme.test", "member"); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := st.DB().ExecContext(ctx, "ANALYZE api_keys"); err != nil {
		b.Fatal(err)
	}
	hash := secret.HashAPIKey(creds.Secret)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.CredentialByHash(ctx, hash); err != nil {
			b.Fatal(err)
		}
	}
}

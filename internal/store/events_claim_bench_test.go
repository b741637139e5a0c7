package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// BenchmarkClaimUndispatched measures one relay's claim of a batch of 500
// from a backlog of 100,000 undispatched events (beside 100,000 dispatched
// ones) in 1 and in 50 workspaces; each claimed batch is released untimed,
// so every claim faces the whole backlog. It reports the claim's mean
// latency (ms/claim).
//
// Run: go test -run '^$' -bench ClaimUndispatched -benchtime 50x ./internal/store
func BenchmarkClaimUndispatched(b *testing.B) {
	for _, workspaces := range []int{1, 50} {
		b.Run(fmt.Sprintf("workspaces=%d", workspaces), func(b *testing.B) {
			st := store.New(pgtest.NewDB(b))
			ctx := context.Background()
			var ws []uuid.UUID
			err := st.DB().NewRaw(`INSERT INTO workspaces (id, name) SELECT gen_random_uuid(), 'w' || g
				FROM generate_series(1, ?) g RETURNING id`, workspaces).Scan(ctx, &ws)
			if err != nil {
				b.Fatal(err)
			}
			// In chunks, each well inside the driver's read timeout.
			for from := 1; from <= 200000; from += 20000 {
				_, err := st.DB().NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, dispatched_at, recipients)
					SELECT gen_random_uuid(), (?::uuid[])[1 + g % ?], 'test.created', '{}'::jsonb, now() - interval '1 hour' + g * interval '1 ms',
						CASE WHEN g <= 100000 THEN now() END, ARRAY[gen_random_uuid()]
					FROM generate_series(?::int, ?::int) g`, pgdialect.Array(ws), workspaces, from, from+19999).Exec(ctx)
				if err != nil {
					b.Fatal(err)
				}
			}
			benchClaims(b, st, 500, nil)
		})
	}
}

// BenchmarkClaimManyWorkspacesPending measures a relay's claim of 16 (its
// batch) when 50,000 workspaces each have two undispatched events, as
// after an outage: a claim's cost must not grow with the workspaces
// waiting. It reports the claim's mean latency (ms/claim).
//
// Run: go test -run '^$' -bench ClaimManyWorkspacesPending -benchtime 50x ./internal/store
func BenchmarkClaimManyWorkspacesPending(b *testing.B) {
	const workspaces = 50000
	st := store.New(pgtest.NewDB(b))
	ctx := context.Background()
	var ws []uuid.UUID
	err := st.DB().NewRaw(`INSERT INTO workspaces (id, name) SELECT gen_random_uuid(), 'w' || g
		FROM generate_series(1, ?) g RETURNING id`, workspaces).Scan(ctx, &ws)
	if err != nil {
		b.Fatal(err)
	}
	_, err = st.DB().NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), (?::uuid[])[1 + g % ?], 'test.created', '{}'::jsonb, now() - interval '1 hour' + g * interval '1 ms',
			ARRAY[gen_random_uuid()]
		FROM generate_series(1, ?) g`, pgdialect.Array(ws), workspaces, 2*workspaces).Exec(ctx)
	if err != nil {
		b.Fatal(err)
	}
	benchClaims(b, st, 16, new(store.ClaimTurns))
}

// benchClaims analyzes the events, then times claims of limit (with
// turns), each given back untimed so the next faces the same backlog, and
// reports their mean latency (ms/claim).
func benchClaims(b *testing.B, st *store.Store, limit int, turns *store.ClaimTurns) {
	ctx := context.Background()
	if _, err := st.DB().ExecContext(ctx, `VACUUM ANALYZE events`); err != nil {
		b.Fatal(err)
	}
	var claiming time.Duration
	for b.Loop() {
		start := time.Now()
		got, err := st.Events().ClaimUndispatched(ctx, limit, time.Minute, turns)
		claiming += time.Since(start)
		if err != nil || len(got) != limit {
			b.Fatalf("claimed %d (%v), want %d", len(got), err, limit)
		}
		if err := st.Events().ReleaseClaims(ctx, claimOrder(got)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(claiming.Microseconds())/1000/float64(b.N), "ms/claim")
}

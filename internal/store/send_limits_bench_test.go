package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// BenchmarkAttemptSendLimits is what the send limits add to an attempt's
// healthy, unlimited path (no rate, nothing in flight, not paused), beside
// what the attempt read before them:
//
//   - state: AttemptState alone, the read before a send without limits;
//   - state+acquire+release: the limits as two more round trips;
//   - stateAcquire+release: the acquire folded into the read
//     (AttemptStateAcquire, what the activity does), plus the release.
//
// Run: go test -run '^$' -bench AttemptSendLimits -benchmem ./internal/store
func BenchmarkAttemptSendLimits(b *testing.B) {
	var ws uuid.UUID
	f := newSendFixture(b)
	if err := f.a.DB().QueryRowContext(f.ctx, `SELECT workspace_id FROM webhook_subscriptions WHERE id = ?`, f.sub).Scan(&ws); err != nil {
		b.Fatal(err)
	}
	ev, err := f.a.Events().Create(f.ctx, models.NewEvent{WorkspaceID: ws, Type: models.EventTestCreated, Data: json.RawMessage(`{"n":1}`)})
	if err != nil {
		b.Fatal(err)
	}
	lease := func() store.SendLease {
		return store.SendLease{Key: uuid.New(), MaxInFlight: 10, Duration: 30 * time.Second}
	}
	st, limits := f.a.Deliveries(), f.a.SendLimits()
	b.Run("state", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.AttemptState(f.ctx, f.sub, ev.ID, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("state+acquire+release", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.AttemptState(f.ctx, f.sub, ev.ID, 1); err != nil {
				b.Fatal(err)
			}
			l := lease()
			if g, err := limits.Acquire(f.ctx, f.sub, l); err != nil || !g.OK {
				b.Fatal(g, err)
			}
			if err := limits.Release(f.ctx, f.sub, l.Key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stateAcquire+release", func(b *testing.B) {
		for b.Loop() {
			l := lease()
			s, err := st.AttemptStateAcquire(f.ctx, f.sub, ev.ID, 1, l)
			if err != nil || s.Grant == nil || !s.Grant.OK {
				b.Fatal(s.Grant, err)
			}
			if err := limits.Release(f.ctx, f.sub, l.Key); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package api

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// usageInterval is how stale dateLastUsed may get: at most one write per key
// per interval, so a busy key does not turn every read into a write.
const usageInterval = time.Minute

type usage struct {
	keyID uuid.UUID
	at    time.Time
}

// usageRecorder updates dateLastUsed off the request path: requests only
// enqueue (never blocking), and one goroutine writes.
type usageRecorder struct {
	store *store.Store
	log   *slog.Logger
	queue chan usage

	mu     sync.Mutex
	recent map[uuid.UUID]time.Time // last enqueue per key, in this process
}

func newUsageRecorder(st *store.Store, log *slog.Logger) *usageRecorder {
	return &usageRecorder{store: st, log: log, queue: make(chan usage, 1024), recent: map[uuid.UUID]time.Time{}}
}

// seen notes a successful authentication. The stored timestamp and this
// process's memory both suppress writes within the interval.
func (u *usageRecorder) seen(p models.Principal, now time.Time) {
	if p.DateLastUsed != nil && now.Sub(*p.DateLastUsed) < usageInterval {
		return
	}
	u.mu.Lock()
	last, ok := u.recent[p.KeyID]
	if ok && now.Sub(last) < usageInterval {
		u.mu.Unlock()
		return
	}
	u.recent[p.KeyID] = now
	u.mu.Unlock()
	select {
	case u.queue <- usage{keyID: p.KeyID, at: now}:
	default:
		// Queue full: drop. A later request after the interval records it.
	}
}

func (u *usageRecorder) run(ctx context.Context) {
	prune := time.NewTicker(usageInterval)
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case x := <-u.queue:
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if _, err := u.store.TouchLastUsed(wctx, x.keyID, x.at); err != nil && ctx.Err() == nil {
				u.log.Warn("record key usage", slog.Any("error", err))
			}
			cancel()
		case now := <-prune.C:
			u.mu.Lock()
			for id, t := range u.recent {
				if now.Sub(t) >= usageInterval {
					delete(u.recent, id)
				}
			}
			u.mu.Unlock()
		}
	}
}

package api

import (
	"container/list"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"golang.org/x/time/rate"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// maxBuckets bounds each table of token buckets (about 2 MB at 10,000):
// client addresses come from anyone, so a flood of them evicts the idlest
// buckets instead of growing memory.
const maxBuckets = 10000

// buckets is an LRU table of token buckets. A bucket evicted or never made
// is full, so eviction only ever forgives.
type buckets[K comparable] struct {
	limit config.RateLimit
	mu    sync.Mutex
	order *list.List // of *bucket[K], most recently used first
	index map[K]*list.Element
}

type bucket[K comparable] struct {
	key K
	lim *rate.Limiter
}

// newBuckets returns nil for a limit that is off; a nil table admits all.
func newBuckets[K comparable](l config.RateLimit) *buckets[K] {
	if l.Off() {
		return nil
	}
	return &buckets[K]{limit: l, order: list.New(), index: map[K]*list.Element{}}
}

func (b *buckets[K]) get(key K) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.index[key]; ok {
		b.order.MoveToFront(e)
		return e.Value.(*bucket[K]).lim
	}
	if b.order.Len() >= maxBuckets {
		oldest := b.order.Back()
		b.order.Remove(oldest)
		delete(b.index, oldest.Value.(*bucket[K]).key)
	}
	lim := rate.NewLimiter(rate.Limit(b.limit.Rate), b.limit.Burst)
	b.index[key] = b.order.PushFront(&bucket[K]{key: key, lim: lim})
	return lim
}

func (b *buckets[K]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.order.Len()
}

// budget is one class of requests: a bucket per API key and a larger one
// per workspace, shared by the workspace's keys.
type budget struct {
	perKey, perWorkspace *buckets[uuid.UUID]
	mu                   *sync.Mutex // makes admit's check-then-take atomic
	// clock never goes back: key lookups finish out of order, and a
	// rate.Limiter whose clock moves back credits the same time twice.
	clock *monotonic
}

// limits holds every bucket of one API replica; replicas share nothing.
type limits struct {
	reads, writes, events budget
	authFailures          *buckets[netip.Addr]
	authClock             monotonic // the failure buckets' clock (see budget.clock)
	// recentlyValid holds the hashes of keys that authenticated lately, which
	// pass their address's failure throttle: behind a proxy every client
	// shares one address, and a guesser there must not lock the others out.
	recentlyValid *recentSet
}

// monotonic hands out times that never go back: the latest it has seen.
type monotonic struct {
	mu     sync.Mutex
	latest time.Time
}

func (m *monotonic) at(now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Before(m.latest) {
		return m.latest
	}
	m.latest = now
	return now
}

// recentlyValidFor is how long an authenticated key passes the failure throttle.
const recentlyValidFor = 10 * time.Minute

// recentSet is an LRU set of key hashes with the time each was last seen.
type recentSet struct {
	mu    sync.Mutex
	order *list.List // of *recentEntry, most recent first
	index map[[32]byte]*list.Element
}

type recentEntry struct {
	hash [32]byte
	at   time.Time
}

func newRecentSet() *recentSet {
	return &recentSet{order: list.New(), index: map[[32]byte]*list.Element{}}
}

func (s *recentSet) add(hash []byte, now time.Time) {
	var h [32]byte
	if copy(h[:], hash) != len(h) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.index[h]; ok {
		e.Value.(*recentEntry).at = now
		s.order.MoveToFront(e)
		return
	}
	if s.order.Len() >= maxBuckets {
		oldest := s.order.Back()
		s.order.Remove(oldest)
		delete(s.index, oldest.Value.(*recentEntry).hash)
	}
	s.index[h] = s.order.PushFront(&recentEntry{hash: h, at: now})
}

func (s *recentSet) has(hash []byte, now time.Time) bool {
	var h [32]byte
	if copy(h[:], hash) != len(h) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.index[h]
	return ok && now.Sub(e.Value.(*recentEntry).at) < recentlyValidFor
}

func newLimits(c config.Config) *limits {
	factor := max(c.RateLimitWorkspaceFactor, 1)
	b := func(l config.RateLimit) budget {
		return budget{perKey: newBuckets[uuid.UUID](l), perWorkspace: newBuckets[uuid.UUID](l.Scale(factor)), mu: &sync.Mutex{}, clock: &monotonic{}}
	}
	return &limits{
		reads:         b(c.RateLimitReads),
		writes:        b(c.RateLimitWrites),
		events:        b(c.RateLimitEvents),
		authFailures:  newBuckets[netip.Addr](c.RateLimitAuthFailures),
		recentlyValid: newRecentSet(),
	}
}

// budgetFor classes a matched request: publishing events, other writes, or reads.
func (l *limits) budgetFor(r *http.Request) budget {
	if route := mux.CurrentRoute(r); route != nil && route.GetName() == "events_publish" {
		return l.events
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return l.reads
	}
	return l.writes
}

// quota is what the RateLimit-* headers report: the tighter of the
// buckets a request drew from.
type quota struct {
	limit, remaining int
	reset            time.Duration // until the bucket is full again
	retryAfter       time.Duration // until a request is admitted; 0 if it was
}

func quotaOf(lim *rate.Limiter, now time.Time) quota {
	tokens := lim.TokensAt(now)
	q := quota{limit: lim.Burst(), remaining: max(int(math.Floor(tokens)), 0)}
	if lim.Limit() > 0 {
		q.reset = seconds((float64(lim.Burst()) - tokens) / float64(lim.Limit()))
	}
	return q
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// admit takes one token from both of the caller's buckets or from neither,
// so a request one bucket refuses does not spend the other's. The quota is
// the zero value when the class is not limited.
func (b budget) admit(p models.Principal, now time.Time) (quota, bool) {
	var lims []*rate.Limiter
	if b.perKey != nil {
		lims = append(lims, b.perKey.get(p.KeyID))
	}
	if b.perWorkspace != nil {
		lims = append(lims, b.perWorkspace.get(p.WorkspaceID))
	}
	// Check both, then take from both, under one lock: reserve-and-cancel
	// loses tokens when refusals interleave.
	b.mu.Lock()
	now = b.clock.at(now)
	var wait time.Duration
	for _, lim := range lims {
		if tokens := lim.TokensAt(now); tokens < 1 {
			wait = max(wait, seconds((1-tokens)/float64(lim.Limit())))
		}
	}
	if wait == 0 {
		for _, lim := range lims {
			lim.AllowN(now, 1)
		}
	}
	b.mu.Unlock()
	var q quota
	for i, lim := range lims {
		if qi := quotaOf(lim, now); i == 0 || qi.remaining < q.remaining {
			q = qi
		}
	}
	if wait > 0 {
		q.remaining, q.retryAfter = 0, wait
		return q, false
	}
	return q, true
}

// clientAddr is the TCP peer of the request, the only address a client
// cannot choose; X-Forwarded-For is deliberately not read. IPv6 peers are
// grouped by /64, the block one host usually holds.
func clientAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{} // every unreadable peer shares one bucket
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		a = netip.PrefixFrom(a, 64).Masked().Addr()
	}
	return a
}

// authRefused reports whether addr has spent its failed-authentication
// budget; such an address is refused before its token is looked up.
func (l *limits) authRefused(addr netip.Addr, now time.Time) (quota, bool) {
	if l.authFailures == nil {
		return quota{}, false
	}
	lim := l.authFailures.get(addr)
	now = l.authClock.at(now)
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return quota{}, false
	}
	q := quotaOf(lim, now)
	q.retryAfter = seconds((1 - tokens) / float64(lim.Limit()))
	return q, true
}

func (l *limits) authFailed(addr netip.Addr, now time.Time) {
	if l.authFailures != nil {
		l.authFailures.get(addr).AllowN(l.authClock.at(now), 1)
	}
}

// setQuotaHeaders writes the RateLimit-* headers of the IETF httpapi draft.
func setQuotaHeaders(w http.ResponseWriter, q quota) {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(q.limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(q.remaining))
	h.Set("RateLimit-Reset", strconv.FormatInt(ceilSeconds(q.reset), 10))
}

// ceilSeconds rounds up, so a client that waits that long is admitted.
func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

// writeRateLimited answers 429 rate_limited with Retry-After. No
// X-Should-Retry: false, since the same request will succeed later.
func (s *Server) writeRateLimited(w http.ResponseWriter, r *http.Request, q quota, message string) {
	setQuotaHeaders(w, q)
	w.Header().Set("Retry-After", strconv.FormatInt(max(ceilSeconds(q.retryAfter), 1), 10))
	writeErrorBody(w, http.StatusTooManyRequests, errorPayload{
		Code: "rate_limited", Message: message, RequestID: requestIDFrom(r.Context()),
	})
}

// admitPortal classes and admits a portal request like an API request of
// the same method (Portal describes the budgets it draws from).
func (s *Server) admitPortal(r *http.Request, sessionID, workspaceID uuid.UUID) (time.Duration, bool) {
	q, ok := s.limits.budgetFor(r).admit(models.Principal{KeyID: sessionID, WorkspaceID: workspaceID}, s.now())
	return q.retryAfter, ok
}

// portalOpenRefused reports whether the request's address has spent its
// failed-authentication budget (RATE_LIMIT_AUTH_FAILURES), as a bearer
// token from it would be refused.
func (s *Server) portalOpenRefused(r *http.Request) (time.Duration, bool) {
	q, refused := s.limits.authRefused(clientAddr(r), s.now())
	if refused {
		s.metrics.authFail.WithLabelValues("throttled").Inc()
	}
	return q.retryAfter, refused
}

// portalOpenFailed counts a refused portal link against its address.
func (s *Server) portalOpenFailed(r *http.Request) {
	s.metrics.authFail.WithLabelValues("invalid").Inc()
	s.limits.authFailed(clientAddr(r), s.now())
}

package webhooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/models"
)

// Throughput of the dev setup: the real API and worker processes, the
// embedded Temporal server, PostgreSQL, and an HTTPS receiver, all on this
// machine. Run with a fixed count, for example:
//
//	go test ./harness/e2e/webhooks -run '^$' -bench . -benchtime 400x
//
// Nothing here runs without -bench.

// publishers is how many clients publish at once.
const publishers = 16

// publisher posts events with a connection pool sized for the publishers.
type publisher struct {
	env    *testenv.Env
	client *http.Client
}

func newPublisher(env *testenv.Env) *publisher {
	return &publisher{env: env, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: publishers * 2}}}
}

// publish posts one event and returns its id.
func (p *publisher) publish(b *testing.B, typ string) string {
	body, _ := json.Marshal(map[string]any{"type": typ, "data": map[string]any{"testId": "bench", "status": "passing"}})
	req, _ := http.NewRequest(http.MethodPost, p.env.BaseURL+wsPath(p.env, "/events"), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.env.AdminKey)
	resp, err := p.client.Do(req)
	if err != nil {
		b.Error(err)
		return ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var acc models.EventAccepted
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &acc) != nil {
		b.Errorf("publish: %d %s", resp.StatusCode, raw)
		return ""
	}
	return acc.ID.String()
}

// publishAll publishes n events from the publishers, as fast as they can
// (every 0) or one every interval, and returns, per event id, when its POST
// was sent.
func (p *publisher) publishAll(b *testing.B, n int, typ string, every time.Duration) map[string]time.Time {
	var (
		mu   sync.Mutex
		sent = make(map[string]time.Time, n)
		jobs = make(chan struct{})
		wg   sync.WaitGroup
	)
	go func() {
		defer close(jobs)
		next := time.Now()
		for range n {
			if every > 0 {
				time.Sleep(time.Until(next))
				next = next.Add(every)
			}
			jobs <- struct{}{}
		}
	}()
	for range publishers {
		wg.Go(func() {
			for range jobs {
				t0 := time.Now()
				if id := p.publish(b, typ); id != "" {
					mu.Lock()
					sent[id] = t0
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return sent
}

// BenchmarkPublishEvents measures events accepted per second by POST
// .../events: each one stored and its delivery workflow started before the
// 202. No subscription matches, so the worker's share is one activity per
// event.
func BenchmarkPublishEvents(b *testing.B) {
	env := testenv.Start(b)
	p := newPublisher(env)
	p.publish(b, "test.deleted") // warm up connections and the lazy Temporal client
	b.ResetTimer()
	start := time.Now()
	sent := p.publishAll(b, b.N, "test.deleted", 0)
	elapsed := time.Since(start)
	b.StopTimer()
	if len(sent) != b.N {
		b.Fatalf("%d of %d events accepted", len(sent), b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

// countingReceiver notes when each delivery of each event arrives.
type countingReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	at   map[string][]time.Time
	n    int
	want int
	done chan struct{}
}

func newCountingReceiver(b *testing.B, want int) *countingReceiver {
	rc := &countingReceiver{at: map[string][]time.Time{}, want: want, done: make(chan struct{})}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		now := time.Now()
		rc.mu.Lock()
		id := r.Header.Get("webhook-id")
		rc.at[id] = append(rc.at[id], now)
		rc.n++
		if rc.n == rc.want {
			close(rc.done)
		}
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(rc.Close)
	return rc
}

// BenchmarkDeliveryEndToEnd measures deliveries per second from the first
// POST to the last receipt, with one and with ten subscriptions per event,
// and the latency of each delivery from its POST being sent to its receipt
// (p50, p99). "saturated" publishes as fast as 16 clients can, so its
// latency is mostly queueing behind the backlog; "paced" publishes 10
// events a second, below capacity, so its latency is the pipeline's own.
func BenchmarkDeliveryEndToEnd(b *testing.B) {
	env := testenv.Start(b)
	p := newPublisher(env)
	for _, c := range []struct {
		subs  int
		every time.Duration
	}{{1, 0}, {10, 0}, {1, 100 * time.Millisecond}, {10, 100 * time.Millisecond}} {
		mode := "saturated"
		if c.every > 0 {
			mode = "paced-10per-s"
		}
		subs := c.subs
		b.Run(fmt.Sprintf("subscriptions=%d/%s", subs, mode), func(b *testing.B) {
			rc := newCountingReceiver(b, b.N*subs)
			var hooks []models.WebhookCreated
			for i := range subs {
				hooks = append(hooks, subscribe(b, env, nil, map[string]any{
					"url": fmt.Sprintf("%s/hook/%d", rc.URL, i), "eventTypes": []string{"tests.result.updated"},
				}))
			}
			// Later rounds must not deliver to this round's subscriptions.
			defer func() {
				for _, h := range hooks {
					env.DoJSON(b, http.MethodDelete, wsPath(env, "/webhooks/"+h.ID.String()), env.AdminKey, nil, http.StatusNoContent, nil)
				}
			}()

			b.ResetTimer()
			start := time.Now()
			sent := p.publishAll(b, b.N, "tests.result.updated", c.every)
			select {
			case <-rc.done:
			case <-time.After(5*time.Minute + time.Duration(b.N*subs)*10*time.Millisecond):
				b.Fatalf("%d of %d deliveries arrived", rc.n, b.N*subs)
			}
			elapsed := time.Since(start)
			b.StopTimer()

			rc.mu.Lock()
			defer rc.mu.Unlock()
			var lat []time.Duration
			for id, times := range rc.at {
				t0, ok := sent[id]
				if !ok {
					b.Fatalf("a delivery for unknown event %s", id)
				}
				if len(times) != subs {
					b.Errorf("event %s delivered %d times, want %d", id, len(times), subs)
				}
				for _, at := range times {
					lat = append(lat, at.Sub(t0))
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(b.N*subs)/elapsed.Seconds(), "deliveries/s")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[(len(lat)*99)/100]), "p99-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

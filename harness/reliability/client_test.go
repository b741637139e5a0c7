package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
)

// apiClient calls the API process with a workspace's admin key.
type apiClient struct{ *apiclient.Client }

// answer is one API response.
type answer struct {
	status  int
	body    []byte
	header  http.Header
	elapsed time.Duration
	err     error // transport error or timeout: no answer
}

func (c *apiClient) do(ctx context.Context, method, path string, body any) answer {
	r, err := c.Send(ctx, method, path, body)
	return answer{status: r.Status, body: r.Body, header: r.Header, elapsed: r.Elapsed, err: err}
}

// createWebhook subscribes url to test.created and returns its id and secret.
func (c *apiClient) createWebhook(ctx context.Context, url string) (id, secret string, err error) {
	a := c.do(ctx, http.MethodPost, c.WSPath("/webhooks"),
		map[string]any{"url": url, "eventTypes": []string{"test.created"}})
	if a.err != nil || a.status != http.StatusCreated {
		return "", "", fmt.Errorf("create webhook: %d %s %v", a.status, a.body, a.err)
	}
	var out struct{ ID, Secret string }
	if err := json.Unmarshal(a.body, &out); err != nil {
		return "", "", err
	}
	return out.ID, out.Secret, nil
}

// publish sends one test.created event; it returns the event id on 202.
func (c *apiClient) publish(ctx context.Context, seq int) (string, answer) {
	a := c.do(ctx, http.MethodPost, c.WSPath("/events"),
		map[string]any{"type": "test.created", "data": map[string]any{"seq": seq, "at": time.Now().UnixNano()}})
	if a.err != nil || a.status != http.StatusAccepted {
		return "", a
	}
	var out struct{ ID string }
	if err := json.Unmarshal(a.body, &out); err != nil {
		a.err = err
		return "", a
	}
	return out.ID, a
}

// publisher publishes events from several goroutines and keeps the ids
// answered 202 and every other answer.
type publisher struct {
	c *apiClient
	// send publishes event seq, returning its id on 202; nil is one try
	// without an Idempotency-Key (c.publish).
	send     func(ctx context.Context, seq int) (string, answer)
	mu       sync.Mutex
	accepted []string
	refused  []string // one line per answer other than 202
	sent     atomic.Int64
}

// burst publishes n events with `workers` concurrent publishers and returns
// when all were answered.
func (p *publisher) burst(ctx context.Context, n, workers int) {
	send := p.send
	if send == nil {
		send = p.c.publish
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n || ctx.Err() != nil {
					return
				}
				id, a := send(ctx, i)
				p.sent.Add(1)
				p.mu.Lock()
				if id != "" {
					p.accepted = append(p.accepted, id)
				} else {
					p.refused = append(p.refused, fmt.Sprintf("%d %s %v (after %v)", a.status, bytes.TrimSpace(a.body), a.err, a.elapsed.Round(time.Millisecond)))
				}
				p.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func (p *publisher) ids() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.accepted...)
}

func (p *publisher) refusals() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...)
}

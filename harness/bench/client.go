package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// eventType is what every benchmark event and subscription uses.
const eventType = "test.created"

// pad makes a delivered body about 400 bytes, the size baseline H sends.
var pad = strings.Repeat("x", 240)

// apiClient calls the API processes with a workspace's admin key, each
// request to the next process in turn, as a round-robin load balancer in
// front of several api replicas would.
type apiClient struct {
	*apiclient.Client                     // the first api process: paths, key
	all               []*apiclient.Client // every api process
	next              atomic.Uint64
	ws                procstack.Workspace
	typ               string // the event type it publishes and subscribes to; empty: eventType
}

func newAPIClient(addrs []string, ws procstack.Workspace) *apiClient {
	tr := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	c := &apiClient{ws: ws}
	for i, addr := range addrs {
		one := apiclient.New(fmt.Sprintf("api-%d", i+1), addr, ws.Secret, ws.WorkspaceID)
		one.HTTP.Transport = tr
		c.all = append(c.all, one)
	}
	c.Client = c.all[0]
	return c
}

// withType is a client of the same workspace and key that publishes and
// subscribes to typ: scenario 11 keeps A's probes on a subscription its
// slow load does not reach.
func (c *apiClient) withType(typ string) *apiClient {
	return &apiClient{Client: c.Client, all: c.all, ws: c.ws, typ: typ}
}

func (c *apiClient) eventType() string {
	if c.typ == "" {
		return eventType
	}
	return c.typ
}

// do sends one request to the next api process and returns the status
// and body.
func (c *apiClient) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	one := c.all[(c.next.Add(1)-1)%uint64(len(c.all))]
	r, err := one.Send(ctx, method, path, body)
	return r.Status, r.Body, err
}

// subscribe creates a subscription of url to c's event type and returns its id
// and signing secret.
func (c *apiClient) subscribe(ctx context.Context, url string) (id, secret string, err error) {
	status, body, err := c.do(ctx, http.MethodPost, c.WSPath("/webhooks"),
		map[string]any{"url": url, "eventTypes": []string{c.eventType()}})
	if err != nil || status != http.StatusCreated {
		return "", "", fmt.Errorf("create webhook: %d %s %v", status, body, err)
	}
	var out struct{ ID, Secret string }
	if err := json.Unmarshal(body, &out); err != nil {
		return "", "", err
	}
	return out.ID, out.Secret, nil
}

func (c *apiClient) unsubscribe(ctx context.Context, id string) error {
	status, body, err := c.do(ctx, http.MethodDelete, c.WSPath("/webhooks/"+id), nil)
	if err != nil || status != http.StatusNoContent {
		return fmt.Errorf("delete webhook: %d %s %v", status, body, err)
	}
	return nil
}

// publish sends one event and returns its id once answered 202.
func (c *apiClient) publish(ctx context.Context, seq int) (string, error) {
	status, body, err := c.do(ctx, http.MethodPost, c.WSPath("/events"),
		map[string]any{"type": c.eventType(), "data": map[string]any{"seq": seq, "pad": pad}})
	if err != nil {
		return "", err
	}
	if status != http.StatusAccepted {
		return "", fmt.Errorf("publish: %d %s", status, bytes.TrimSpace(body))
	}
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// publication is what a run of publishers did.
type publication struct {
	mu      sync.Mutex
	sent    map[string]time.Time // event id → when its POST was sent
	accept  []time.Duration      // each 202's latency
	refused atomic.Int64
	first   atomic.Value // first refusal, string
	begin   time.Time
	end     time.Time // the last answer
}

func newPublication() *publication {
	return &publication{sent: map[string]time.Time{}, begin: time.Now()}
}

func (p *publication) publishOne(ctx context.Context, c *apiClient, seq int) {
	t0 := time.Now()
	id, err := c.publish(ctx, seq)
	d := time.Since(t0)
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := t0.Add(d); t.After(p.end) {
		p.end = t
	}
	if err != nil {
		if ctx.Err() == nil && p.refused.Add(1) == 1 {
			p.first.Store(err.Error())
		}
		return
	}
	p.sent[id] = t0
	p.accept = append(p.accept, d)
}

// sentCopy is a copy of sent, for reading without the lock.
func (p *publication) sentCopy() map[string]time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.sent)
}

func (p *publication) accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sent)
}

func (p *publication) refusal() string {
	s, _ := p.first.Load().(string)
	return s
}

// publishWhile has n clients publish into p back to back until end,
// waiting (not publishing) while hold says the backlog is full.
func publishWhile(ctx context.Context, p *publication, c *apiClient, n int, end time.Time, hold func() bool) {
	var seq atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(end) {
				if hold != nil && hold() {
					time.Sleep(2 * time.Millisecond)
					continue
				}
				p.publishOne(ctx, c, int(seq.Add(1)))
			}
		})
	}
	wg.Wait()
}

// publishCount has n clients publish count events as fast as answered.
func publishCount(ctx context.Context, c *apiClient, n, count int) *publication {
	p := newPublication()
	var seq atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(seq.Add(1))
				if i > count {
					return
				}
				p.publishOne(ctx, c, i)
			}
		})
	}
	wg.Wait()
	return p
}

// publishPaced publishes rate events a second for d, through n clients
// (so a slow answer does not delay the next event).
func publishPaced(ctx context.Context, c *apiClient, n int, rate float64, d time.Duration) *publication {
	p := newPublication()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for i := range jobs {
				p.publishOne(ctx, c, i)
			}
		})
	}
	every := time.Duration(float64(time.Second) / rate)
	total := int(rate * d.Seconds())
	next := time.Now()
	for i := range total {
		if ctx.Err() != nil {
			break
		}
		time.Sleep(time.Until(next))
		next = next.Add(every)
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return p
}

// sendTest asks for a test event to one subscription and returns its id
// (the webhook-id its delivery carries) once answered 202.
func (c *apiClient) sendTest(ctx context.Context, subID string) (string, error) {
	status, body, err := c.do(ctx, http.MethodPost, c.WSPath("/webhooks/"+subID+"/test"), nil)
	if err != nil {
		return "", err
	}
	if status != http.StatusAccepted {
		return "", fmt.Errorf("test event: %d %s", status, bytes.TrimSpace(body))
	}
	var out struct{ EventID string }
	if err := json.Unmarshal(body, &out); err != nil {
		return "", err
	}
	return out.EventID, nil
}

// redeliver asks for one more attempt of an event to a subscription.
func (c *apiClient) redeliver(ctx context.Context, subID, eventID string) error {
	status, body, err := c.do(ctx, http.MethodPost, c.WSPath("/webhooks/"+subID+"/deliveries/"+eventID+"/redeliver"), nil)
	if err != nil {
		return err
	}
	if status != http.StatusAccepted {
		return fmt.Errorf("redeliver: %d %s", status, bytes.TrimSpace(body))
	}
	return nil
}

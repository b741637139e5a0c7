package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// carefulClient publishes events as a careful client does: each event
// with an Idempotency-Key of its own, sent again with the same key and the
// same bytes on no answer, 5xx, 408, 409 and 429 until it is answered 202,
// waiting Retry-After when the answer has one (otherwise 100 ms doubling
// to 1 s, short enough that the wait measures the service, not the
// client). Other answers are final. It gives up on an event giveUp after
// its first try.
type carefulClient struct {
	c      *apiClient
	run    string // makes keys and markers unique to the run
	giveUp time.Duration

	mu     sync.Mutex
	traces []*trace
}

// trace is what happened to one event of a careful client.
type trace struct {
	seq          int
	key, marker  string
	first, acked time.Time // acked is zero until a 202
	gaveUp       time.Time
	id           string
	tries        int
	inProgress   int    // 409 idempotency_request_in_progress answers
	last         string // the last answer, for the report
	finalRefusal bool   // an answer no retry can change
}

func newCarefulClient(c *apiClient, giveUp time.Duration) *carefulClient {
	return &carefulClient{c: c, giveUp: giveUp, run: strconv.FormatInt(time.Now().UnixNano(), 36)}
}

// publish sends event seq until it is answered 202 or given up; it has the
// shape of publisher.send.
func (cc *carefulClient) publish(ctx context.Context, seq int) (string, answer) {
	tr := &trace{seq: seq, key: fmt.Sprintf("crash-%s-%d", cc.run, seq), marker: fmt.Sprintf("%s-%d", cc.run, seq)}
	cc.mu.Lock()
	cc.traces = append(cc.traces, tr)
	cc.mu.Unlock()
	// Marshalled once: the API replays only a byte-identical body.
	body, err := json.Marshal(map[string]any{"type": "test.created", "data": map[string]any{"seq": seq, "marker": tr.marker}})
	if err != nil {
		return "", answer{err: err}
	}
	header := http.Header{"Idempotency-Key": {tr.key}}
	backoff := 100 * time.Millisecond
	for {
		now := time.Now()
		cc.mu.Lock()
		if tr.first.IsZero() {
			tr.first = now
		}
		tr.tries++
		cc.mu.Unlock()
		r, err := cc.c.SendWith(ctx, http.MethodPost, cc.c.WSPath("/events"), header, json.RawMessage(body))
		a := answer{status: r.Status, body: r.Body, header: r.Header, elapsed: r.Elapsed, err: err}
		var out struct {
			ID    string
			Error struct{ Code string }
		}
		if err == nil {
			_ = json.Unmarshal(r.Body, &out)
		}
		cc.mu.Lock()
		tr.last = a.brief()
		if a.status == http.StatusConflict && out.Error.Code == "idempotency_request_in_progress" {
			tr.inProgress++
		}
		done := false
		switch {
		case err == nil && a.status == http.StatusAccepted && out.ID != "":
			tr.acked, tr.id, done = time.Now(), out.ID, true
		case !retryable(a):
			tr.finalRefusal, done = true, true
		case time.Since(tr.first) >= cc.giveUp:
			tr.gaveUp, done = time.Now(), true
		}
		cc.mu.Unlock()
		if done {
			if tr.id == "" && a.err == nil && a.status == http.StatusAccepted {
				a.err = fmt.Errorf("202 without an event id: %s", a.body)
			}
			return tr.id, a
		}
		wait, ok := retryAfter(a.header)
		if !ok {
			wait, backoff = backoff, min(2*backoff, time.Second)
		}
		select {
		case <-ctx.Done():
			return "", answer{err: ctx.Err()}
		case <-time.After(wait):
		}
	}
}

// retryable: no answer, a 5xx, 408, 409 or 429.
func retryable(a answer) bool {
	switch {
	case a.err != nil, a.status >= 500:
		return true
	}
	switch a.status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return false
}

// retryAfter reads Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}

// brief is an answer in one line: its status and body, or its error.
func (a answer) brief() string {
	if a.err != nil {
		return truncate(a.err.Error(), 200)
	}
	return fmt.Sprintf("%d %s", a.status, truncate(string(a.body), 200))
}

// snapshot copies the traces.
func (cc *carefulClient) snapshot() []trace {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	out := make([]trace, len(cc.traces))
	for i, tr := range cc.traces {
		out[i] = *tr
	}
	return out
}

// ackAfterRestart is how long after the first restart that followed an
// event's first try its 202 came (or, for an event never answered 202,
// the least it would have been: until it was given up at end). ok is false
// when no restart fell between the first try and end.
func ackAfterRestart(first, end time.Time, restarts []time.Time) (d time.Duration, ok bool) {
	for _, r := range restarts {
		if r.After(first) {
			if end.After(r) {
				return end.Sub(r), true
			}
			return 0, false
		}
	}
	return 0, false
}

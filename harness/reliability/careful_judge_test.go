package reliability

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
)

// TestCarefulClient checks g-api-crash-loop's publisher on a hand-made
// server; unlike the fault suite it always runs. It must re-send the same
// key and bytes through no answer, 503 and 409 (waiting its Retry-After),
// stop at a 202, stop at once on a 422, and give up when told.
func TestCarefulClient(t *testing.T) {
	type seen struct {
		key, body string
		at        time.Time
	}
	var mu sync.Mutex
	var got []seen
	script := []func(http.ResponseWriter){
		func(w http.ResponseWriter) { // the connection dropped: no answer
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		},
		func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"error":{"code":"idempotency_request_in_progress"}}`)
		},
		func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"id":"ev-1"}`)
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Header.Get("Idempotency-Key"), string(body), time.Now()})
		n := len(got)
		mu.Unlock()
		switch ws := strings.Split(r.URL.Path, "/")[3]; {
		case ws == "refused":
			w.WriteHeader(http.StatusUnprocessableEntity)
		case ws == "stuck":
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusConflict)
		case n <= len(script):
			script[n-1](w)
		}
	}))
	defer srv.Close()
	client := func(ws string, giveUp time.Duration) *carefulClient {
		return newCarefulClient(&apiClient{apiclient.New("api", strings.TrimPrefix(srv.URL, "http://"), "k", ws)}, giveUp)
	}
	ctx := context.Background()

	cc := client("ws", time.Minute)
	if id, a := cc.publish(ctx, 7); id != "ev-1" {
		t.Fatalf("publish: %q, %s; want ev-1", id, a.brief())
	}
	tr := cc.snapshot()[0]
	if tr.tries != 4 || tr.inProgress != 1 || tr.acked.IsZero() {
		t.Errorf("trace %+v, want 4 tries, one 409 in progress, acknowledged", tr)
	}
	for i, s := range got {
		if s.key != tr.key || s.body != got[0].body || s.key == "" || !strings.Contains(s.body, tr.marker) {
			t.Errorf("try %d sent key %q body %s; want key %q and the first body, with marker %s", i+1, s.key, s.body, tr.key, tr.marker)
		}
	}
	if gap := got[3].at.Sub(got[2].at); gap < time.Second {
		t.Errorf("re-sent %v after a 409 with Retry-After: 1", gap)
	}

	cc = client("refused", time.Minute)
	if id, _ := cc.publish(ctx, 1); id != "" || cc.snapshot()[0].tries != 1 || !cc.snapshot()[0].finalRefusal {
		t.Errorf("a 422: id %q, trace %+v; want one try, refused", id, cc.snapshot()[0])
	}

	cc = client("stuck", 300*time.Millisecond)
	if id, _ := cc.publish(ctx, 1); id != "" || cc.snapshot()[0].gaveUp.IsZero() || cc.snapshot()[0].tries < 2 {
		t.Errorf("always 409: id %q, trace %+v; want retries, then given up", id, cc.snapshot()[0])
	}
}

// TestAckAfterRestart checks the measure of g-api-crash-loop's budget and
// its count of doubled events.
func TestAckAfterRestart(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	restarts := []time.Time{at(10), at(20)}
	tests := []struct {
		name        string
		first, end  time.Time
		want        time.Duration
		wantCrossed bool
	}{
		{"acknowledged before any kill", at(1), at(2), 0, false},
		{"in flight at the first kill", at(8), at(13), 3 * time.Second, true},
		{"first tried while the API was down", at(9), at(25), 15 * time.Second, true},
		{"acknowledged before the next restart", at(12), at(14), 0, false},
		{"first tried after the last restart", at(21), at(40), 0, false},
	}
	for _, tt := range tests {
		d, crossed := ackAfterRestart(tt.first, tt.end, restarts)
		if d != tt.want || crossed != tt.wantCrossed {
			t.Errorf("%s: %v, %v; want %v, %v", tt.name, d, crossed, tt.want, tt.wantCrossed)
		}
	}

	_, doubled, unmarked := groupByMarker([]storedEvent{{"e1", "m1"}, {"e2", "m2"}, {"e3", "m1"}, {"e4", ""}})
	if len(doubled) != 1 || !strings.Contains(doubled[0], "e1, e3") || unmarked != 1 {
		t.Errorf("doubled %v, unmarked %d; want m1 as e1, e3 and one unmarked", doubled, unmarked)
	}
}

package receiver_test

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openlayer-ai/workspace-service/harness/receiver"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// A signed request is counted per event and answered as the endpoint
// says; a badly signed one is refused and noted.
func TestReceiver(t *testing.T) {
	rc := receiver.New()
	defer rc.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: rc.Pool()}}, Timeout: 5 * time.Second}
	hook, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	send := func(e *receiver.Endpoint, id string, sign bool) int {
		t.Helper()
		body := []byte(`{"n":1}`)
		req, _ := http.NewRequest(http.MethodPost, e.URL(), bytes.NewReader(body))
		now := time.Now()
		sig := "v1,bm90IGEgc2lnbmF0dXJl"
		if sign {
			if sig, err = hook.Sign(id, now, body); err != nil {
				t.Fatal(err)
			}
		}
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	ok := rc.Endpoint(false)
	failFirst := rc.EndpointAnswering(func(w http.ResponseWriter, _ *http.Request, nth int) int {
		status := http.StatusOK
		if nth == 1 {
			status = http.StatusInternalServerError
		}
		w.WriteHeader(status)
		return status
	})
	for _, e := range []*receiver.Endpoint{ok, failFirst} {
		if err := e.Trust(secret); err != nil {
			t.Fatal(err)
		}
	}
	if got := send(ok, "msg_1", true); got != http.StatusNoContent {
		t.Errorf("signed request: %d, want 204", got)
	}
	send(ok, "msg_1", true) // a duplicate
	if got := send(ok, "msg_2", false); got != http.StatusUnauthorized {
		t.Errorf("badly signed request: %d, want 401", got)
	}
	if d, dups := ok.Counts(); d != 1 || dups != 1 {
		t.Errorf("Counts() = %d, %d; want 1 event, 1 duplicate", d, dups)
	}
	if n, first := rc.Bad(); n != 1 || first == "" || len(rc.Refusals()) != 1 {
		t.Errorf("Bad() = %d, %q; Refusals() = %q; want the one badly signed request", n, first, rc.Refusals())
	}

	for _, want := range []int{http.StatusInternalServerError, http.StatusOK, http.StatusOK} {
		if got := send(failFirst, "msg_3", true); got != want {
			t.Errorf("failFirst: %d, want %d", got, want)
		}
	}
	if g := failFirst.Got("msg_3"); g.N != 3 || g.Completed2xx != 2 || g.After2xx != 1 || g.First2xx.IsZero() {
		t.Errorf("failFirst got %+v; want 3 requests, 2 answered 2xx, 1 after the first 2xx", g)
	}
	if _, ok := failFirst.Receipts()["msg_3"]; !ok || len(failFirst.Receipts()) != 1 {
		t.Errorf("Receipts() = %v, want msg_3", failFirst.Receipts())
	}
}

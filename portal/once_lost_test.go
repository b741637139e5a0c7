package portal_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A form whose token a replay took over while its work ran (past the
// claim's lease, or by a host whose clock runs ahead) may have done its
// work twice: its answer says so and leads to its result, instead of a
// redirect that passes for the only one, and the replay's claim stands.
func TestPortalFormClaimLostIsReported(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	b.do(http.MethodGet, "/portal/endpoints/"+id, nil)
	ctx := context.Background()
	db := h.store.DB()

	// Hold the endpoint's row so the form's work waits inside its claim.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM webhook_subscriptions WHERE id = ? FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"enabled": {"false"}, "csrf": {b.csrf}, "once": {rand.Text()}}
	answer := make(chan *http.Response, 1)
	go func() { answer <- b.send(http.MethodPost, "/portal/endpoints/"+id+"/enabled", form).Result() }()
	claimed := func() bool {
		var n int
		if err := db.NewRaw(`SELECT count(*) FROM portal_form_submissions WHERE location IS NULL`).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	for deadline := time.Now().Add(5 * time.Second); !claimed(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the form never claimed its token")
		}
	}
	// A replay takes the token over, as after the lease: a newer claim.
	if _, err := db.ExecContext(ctx, `UPDATE portal_form_submissions SET claimed_at = claimed_at + interval '16 seconds' WHERE location IS NULL`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil && err != sql.ErrTxDone {
		t.Fatal(err)
	}
	var resp *http.Response
	select {
	case resp = <-answer:
	case <-time.After(15 * time.Second):
		t.Fatal("the form did not answer")
	}
	defer resp.Body.Close()
	body := new(strings.Builder)
	if _, err := io.Copy(body, resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusConflict || resp.Header.Get("Location") != "" ||
		!strings.Contains(body.String(), "Sent twice") || !strings.Contains(body.String(), `href="/portal/endpoints/`+id+`?notice=disabled"`) {
		t.Errorf("a form whose claim was lost: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if !claimed() {
		t.Error("the lost claim recorded its redirect over the replay's claim")
	}
	if !strings.Contains(h.logs.String(), "portal form token taken over") {
		t.Error("the lost claim is not logged")
	}
}

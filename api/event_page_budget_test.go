package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEventListPageBudget: GET .../events reserves room for its page in
// the process's budget first; while others hold the budget it waits, then
// answers 503 unavailable with Retry-After: 1; once they let go it
// proceeds, and a written page gives all its room back.
func TestEventListPageBudget(t *testing.T) {
	h := newHarness(t, noRateLimits)
	for range 2 {
		h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{"x": 1}}, http.StatusAccepted, nil)
	}
	const budget = 1 << 20
	h.srv.SetEventPageBudgetForTest(budget, 200*time.Millisecond)

	release, ok := h.srv.HoldEventPageBudgetForTest(budget)
	if !ok {
		t.Fatal("a fresh budget is not free")
	}
	start := time.Now()
	rec := h.do(http.MethodGet, h.eventsPath(), h.admin.Secret, nil)
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("with the budget held: %d %s, want 503", rec.Code, rec.Body)
	}
	checkError(t, rec, "unavailable", "")
	if got := rec.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("answered after %v, without waiting its 200ms", d)
	}
	if !strings.Contains(h.logs.String(), "event page budget full") {
		t.Error("a 503 for a full budget was not logged")
	}

	release()
	if rec := h.do(http.MethodGet, h.eventsPath(), h.admin.Secret, nil); rec.Code != http.StatusOK {
		t.Fatalf("with the budget released: %d %s, want 200", rec.Code, rec.Body)
	}

	// A request that finds the budget held waits, and proceeds once it is
	// released within its wait.
	h.srv.SetEventPageBudgetForTest(budget, 10*time.Second)
	if release, ok = h.srv.HoldEventPageBudgetForTest(budget); !ok {
		t.Fatal("a fresh budget is not free")
	}
	done := make(chan int, 1)
	go func() { done <- h.do(http.MethodGet, h.eventsPath(), h.admin.Secret, nil).Code }()
	select {
	case code := <-done:
		t.Fatalf("answered %d while the budget was held", code)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	select {
	case code := <-done:
		if code != http.StatusOK {
			t.Fatalf("after release: %d, want 200", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after the budget was released")
	}

	page, _ := h.listEvents("?perPage=100")
	if len(page.Items) != 2 {
		t.Fatalf("%d items, want 2", len(page.Items))
	}
	// Every page written gave its room back.
	if release, ok := h.srv.HoldEventPageBudgetForTest(budget); !ok {
		t.Fatal("the budget is not all free after the pages were written")
	} else {
		release()
	}
}

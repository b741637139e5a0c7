package portal_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// After "Redeliver" the page, filtered to the event, reloads itself until
// an attempt later than the one before the redelivery is there, for at
// most a minute, then stops and says so.
func TestPortalFollowsARedelivery(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	ev := h.testEvent(id)
	attempt := func(n int) {
		t.Helper()
		code := 500
		d := models.WebhookDelivery{ID: uuid.New(), SubscriptionID: uuid.MustParse(id), EventID: ev.ID, AttemptNumber: n,
			StatusCode: &code, DateCreated: time.Now().Add(time.Duration(n) * time.Millisecond)}
		if _, _, err := h.store.Deliveries().Record(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	attempt(1)
	page := func(after int, at time.Time) string {
		return "/portal/endpoints/" + id + "?notice=redeliver&eventId=" + ev.ID.String() +
			"&after=" + strconv.Itoa(after) + "&at=" + strconv.FormatInt(at.Unix(), 10)
	}
	now := time.Now()
	watched := func(path string) (bool, string) {
		t.Helper()
		body := b.do(http.MethodGet, path, nil).Body.String()
		return strings.Contains(body, `data-refresh="2"`), body
	}
	if ok, body := watched(page(1, now)); !ok || strings.Contains(body, `id="watch-note"`) {
		t.Fatalf("a redelivery just asked for is not followed: %s", body)
	}
	attempt(2)
	if ok, body := watched(page(1, now)); ok || strings.Contains(body, `id="watch-note"`) || !strings.Contains(body, `class="attempt">2<`) {
		t.Errorf("the redelivery's attempt is there, yet the page still reloads or says it stopped: %s", body)
	}
	for name, at := range map[string]time.Time{"two minutes ago": now.Add(-2 * time.Minute), "an hour ahead (an edited address)": now.Add(time.Hour)} {
		ok, body := watched(page(2, at))
		if ok || !strings.Contains(body, `id="watch-note"`) || !strings.Contains(body, "stopped reloading itself") {
			t.Errorf("a redelivery asked for %s is still followed, or the page does not say it stopped: %s", name, body)
		}
	}
	if ok, _ := watched("/portal/endpoints/" + id + "?notice=redeliver&eventId=" + ev.ID.String() + "&after=x&at=1"); ok {
		t.Error("a malformed address is followed")
	}
}

package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// BenchmarkRecordAttempt measures the attempt's write against the bare
// record insert it replaced (what the attempt wrote before delivery states
// and health existed), interleaved in one loop so that a loaded machine
// slows both alike: each iteration makes one bare insert and one
// RecordAttempt, and the two latencies are reported apart (bare-p50-ms,
// p50-ms). "Success" is the usual path (a healthy subscription: the
// state's upsert is the only extra write), "Failure" a failure on a
// subscription already failing (no subscription write either),
// "Transition" alternates failure and success, each writing the
// subscription's health.
//
// Run: go test -run '^$' -bench RecordAttempt -benchtime 1000x ./internal/store
func BenchmarkRecordAttempt(b *testing.B) {
	st := store.New(pgtest.NewDB(b))
	ctx := context.Background()
	ws, err := st.Bootstrap(ctx, "B", "b-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		b.Fatal(err)
	}
	sub, err := st.Webhooks().Create(ctx, uuid.New(), models.NewWebhook{WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID,
		URL: "https://example.com", EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true}, []byte{1}, 0)
	if err != nil {
		b.Fatal(err)
	}
	ev, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	rec := func(ok bool) models.WebhookDelivery {
		n++
		return models.WebhookDelivery{SubscriptionID: sub.ID, EventID: ev.ID, AttemptNumber: n, Success: ok,
			StatusCode: new(200), ResponseBody: "ok", DateCreated: time.Now()}
	}
	bare := func() error {
		r := rec(true)
		_, err := st.DB().NewRaw(`INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number, success, status_code,
			response_body, response_time_ms, error_message, date_created) VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, ?)
			ON CONFLICT (subscription_id, event_id, attempt_number) DO NOTHING`,
			uuid.New(), r.SubscriptionID, r.EventID, r.AttemptNumber, r.Success, r.StatusCode, r.ResponseBody, r.DateCreated).Exec(ctx)
		return err
	}
	opts := store.RecordOptions{Disable: store.DisablePolicy{After: 120 * time.Hour, MinSpan: 12 * time.Hour}}
	for _, c := range []struct {
		name string
		ok   func(i int) bool
	}{
		{"Success", func(int) bool { return true }},
		{"Failure", func(int) bool { return false }},
		{"Transition", func(i int) bool { return i%2 == 0 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var bareLat, lat latencies
			i := 0
			for b.Loop() {
				start := time.Now()
				if err := bare(); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := st.Deliveries().RecordAttempt(ctx, rec(c.ok(i)), opts); err != nil {
					b.Fatal(err)
				}
				bareLat.add([]time.Duration{mid.Sub(start)})
				lat.add([]time.Duration{time.Since(mid)})
				i++
			}
			b.StopTimer()
			lat.report(b)
			slices.Sort(bareLat.d)
			b.ReportMetric(float64(bareLat.d[len(bareLat.d)/2].Microseconds())/1000, "bare-p50-ms")
		})
	}
}

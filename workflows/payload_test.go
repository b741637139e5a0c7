package workflows_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/converter"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Operators read payloads in the Web UI: every duration in them is a Go
// duration string, never nanoseconds.
func TestPayloadsCarryDurationsAsStrings(t *testing.T) {
	id := uuid.MustParse("3f2b1c9e-0000-4000-8000-000000000001")
	for _, c := range []struct {
		value any
		want  string
	}{
		{&workflows.DeliveryInput{EventID: id, Schedule: activities.Durations([]time.Duration{2 * time.Second, 5 * time.Minute})},
			`{"eventId":"` + id.String() + `","schedule":["2s","5m0s"],"recipients":null}`},
		{&activities.AttemptInput{EventID: id, SubscriptionID: id, AttemptNumber: 1,
			NextAttemptIn: activities.Duration(4500 * time.Millisecond), MaxWait: activities.Duration(30 * time.Minute)},
			`{"eventId":"` + id.String() + `","subscriptionId":"` + id.String() + `","attemptNumber":1,"final":false,"nextAttemptIn":"4.5s","maxWait":"30m0s"}`},
		{&activities.AttemptResult{Outcome: activities.AttemptThrottled, RetryAfter: activities.Duration(90 * time.Second)},
			`{"outcome":"throttled","statusCode":0,"retryAfter":"1m30s"}`},
		{&workflows.RetentionInput{Retention: activities.Duration(90 * 24 * time.Hour)}, `{"retention":"2160h0m0s"}`},
	} {
		p, err := converter.GetDefaultDataConverter().ToPayload(c.value)
		if err != nil {
			t.Fatal(err)
		}
		if string(p.Data) != c.want {
			t.Errorf("payload %s, want %s", p.Data, c.want)
		}
	}
}

package webhooks_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A subscription stored before the API refused hosts no DNS name can be
// keeps failing, but its attempts' summaries in the real history show the
// host escaped and cut short, never text that reads as another outcome
// ("→ delivered OK") or reverses what follows it (U+202E).
func TestHostileStoredHostsCannotSpoofSummaries(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second} })
	ctx := context.Background()
	long := strings.Repeat("a", 1979) + ".com"
	hosts := map[string]string{ // stored host: how its attempt 2 reads
		"hooks.example.com\u00a0\u2192\u00a0delivered\u00a0OK": `attempt 2 → hooks.example.com\u00a0\u2192\u00a0delivered\u00a0OK`,
		"moc.elpmaxe\u202e.hooks.example.com":                  `attempt 2 → moc.elpmaxe\u202e.hooks.example.com`,
		long:                                                   "attempt 2 → " + long[:99] + "…",
	}
	for host := range hosts {
		c := subscribe(t, env, nil, map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"}})
		if _, err := env.DB.ExecContext(ctx, `UPDATE webhook_subscriptions SET url = ? WHERE id = ?`, "https://"+host+"/in", c.ID); err != nil {
			t.Fatal(err)
		}
	}
	ev := publish(t, env, "test.created", map[string]any{"n": 1})
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, time.Minute, &res)
	if res.Outcome != workflows.OutcomeExhausted {
		t.Errorf("outcome %q, want exhausted: these hosts can never be delivered to", res.Outcome)
	}

	summaries := summariesOf(t, env.History(t, workflows.DeliveryWorkflowID(ev.ID)))
	for _, want := range hosts {
		if !slices.Contains(summaries, want) || !slices.Contains(summaries, "wait for "+want) {
			t.Errorf("no summary %q (or its timer's) in the history; summaries: %q", want, summaries)
		}
	}
	for _, s := range summaries {
		if strings.ContainsAny(s, "\u00a0\u202e") || len(s) > 200 {
			t.Errorf("summary %q shows a hostile host as stored", s)
		}
	}
}

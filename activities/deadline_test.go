package activities_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/models"
)

// checkDeadline compares what a deadline activity returned with the
// expected final state, next deadline and its summary.
func checkDeadline(t *testing.T, got *activities.DeadlineResult, final string, next *time.Time, summary string) {
	t.Helper()
	if !got.Found || got.Final != final || got.NextSummary != summary ||
		(next == nil) != (got.Next == nil) || (next != nil && !got.Next.Equal(*next)) {
		t.Errorf("result %+v (next %v), want final %q, next %v (%q)", got, got.Next, final, next, summary)
	}
}

func TestApplyAPIKeyTransitionsReportsTheNextDeadline(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	for _, c := range []struct {
		name      string
		expiresIn time.Duration // 0: never
		grace     time.Duration // 0: not rotated
		revoke    bool
		now       time.Duration // when the activity runs, after t0
		final     string
		next      *time.Time
		summary   string
	}{
		{name: "no deadline"},
		{name: "expiry", expiresIn: time.Hour, next: at(time.Hour), summary: "key expiry"},
		{name: "grace before expiry", expiresIn: 2 * time.Hour, grace: time.Hour, next: at(time.Hour), summary: "end of grace period"},
		{name: "grace capped by expiry", expiresIn: 30 * time.Minute, grace: time.Hour, next: at(30 * time.Minute), summary: "end of grace period"},
		{name: "grace ended", expiresIn: 2 * time.Hour, grace: time.Hour, now: time.Hour, next: at(2 * time.Hour), summary: "key expiry"},
		{name: "expired", expiresIn: time.Hour, now: time.Hour, final: activities.APIKeyFinalExpired},
		{name: "revoked", expiresIn: time.Hour, grace: time.Hour, revoke: true, final: activities.APIKeyFinalRevoked},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, false)
			owner := models.Principal{WorkspaceID: f.Workspace.WorkspaceID, UserID: f.Workspace.UserID, Role: models.RoleAdmin}
			in := models.NewAPIKey{WorkspaceID: owner.WorkspaceID, UserID: owner.UserID, Now: t0}
			if c.expiresIn > 0 {
				in.ExpiresAt = at(c.expiresIn)
			}
			k, err := f.Store.APIKeys().Create(f.Ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if c.grace > 0 {
				if _, err := f.Store.APIKeys().Rotate(f.Ctx, owner, k.ID, models.APIKeyRotation{Grace: c.grace, Now: t0}); err != nil {
					t.Fatal(err)
				}
			}
			if c.revoke {
				if err := f.Store.APIKeys().Revoke(f.Ctx, owner, k.ID, t0); err != nil {
					t.Fatal(err)
				}
			}
			f.Acts.Now = func() time.Time { return t0.Add(c.now) }
			got, err := f.Acts.ApplyAPIKeyTransitions(f.Ctx, &activities.ApplyAPIKeyTransitionsInput{WorkspaceID: owner.WorkspaceID, KeyID: k.ID})
			if err != nil {
				t.Fatal(err)
			}
			checkDeadline(t, got, c.final, c.next, c.summary)
		})
	}
}

func TestClearPreviousWebhookSecretReportsTheNextDeadline(t *testing.T) {
	f := newFixture(t, false)
	sub, _ := f.Subscribe(t, "https://example.com/hook")
	apply := func(now time.Time) *activities.DeadlineResult {
		t.Helper()
		f.Acts.Now = func() time.Time { return now }
		res, err := f.Acts.ClearPreviousWebhookSecret(f.Ctx, &activities.ClearPreviousWebhookSecretInput{WorkspaceID: f.Workspace.WorkspaceID, SubscriptionID: sub.ID})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	checkDeadline(t, apply(time.Now()), "", nil, "")
	f.rotate(t, sub, time.Hour)
	tg, err := f.Store.Webhooks().Target(f.Ctx, sub.ID)
	if err != nil || tg.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotated with grace: previous secret expires at %v (%v)", tg.PreviousSecretExpiresAt, err)
	}
	end := *tg.PreviousSecretExpiresAt
	checkDeadline(t, apply(time.Now()), "", &end, "end of grace period")
	res := apply(end)
	checkDeadline(t, res, "", nil, "")
	if !res.Changed {
		t.Error("the expired previous secret was not reported erased")
	}
	if res := apply(end); res.Changed {
		t.Error("a second call reported erasing again")
	}
	if res, err := f.Acts.ClearPreviousWebhookSecret(f.Ctx, &activities.ClearPreviousWebhookSecretInput{SubscriptionID: uuid.New()}); err != nil || res.Found {
		t.Errorf("unknown subscription: %+v, %v; want not found", res, err)
	}
}

package webhookops_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

func fields(err error) []string {
	var me *models.Error
	if !errors.As(err, &me) {
		return nil
	}
	var out []string
	for _, d := range me.Details {
		out = append(out, d.Field)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// The creation rules, as both the API's JSON and the portal's form reach them.
func TestNewWebhookFields(t *testing.T) {
	ws, creator := uuid.New(), uuid.New()
	in, err := webhookops.NewWebhookFields{URL: ptr("https://example.com/h"), EventTypes: []string{"test.created"}}.Validate(ws, creator, false)
	if err != nil || !in.Enabled || in.WorkspaceID != ws || in.CreatorID != creator || in.RateLimitPerSecond != nil {
		t.Fatalf("valid: %+v %v", in, err)
	}
	for _, c := range []struct {
		name string
		f    webhookops.NewWebhookFields
		want []string
	}{
		{"nothing", webhookops.NewWebhookFields{}, []string{"url", "eventTypes"}},
		{"http, no types", webhookops.NewWebhookFields{URL: ptr("http://example.com"), EventTypes: []string{}}, []string{"url", "eventTypes"}},
		{"loopback", webhookops.NewWebhookFields{URL: ptr("https://127.0.0.1/h"), EventTypes: []string{"test.created"}}, []string{"url"}},
		{"unknown and twice", webhookops.NewWebhookFields{URL: ptr("https://example.com"), EventTypes: []string{"nope", "test.created", "test.created"}}, []string{"eventTypes[0]", "eventTypes[2]"}},
		{"rate 0", webhookops.NewWebhookFields{URL: ptr("https://example.com"), EventTypes: []string{"test.created"}, RateLimitPerSecond: ptr(0)}, []string{"rateLimitPerSecond"}},
		{"description with NUL", webhookops.NewWebhookFields{URL: ptr("https://example.com"), EventTypes: []string{"test.created"}, Description: ptr("a\x00")}, []string{"description"}},
	} {
		_, err := c.f.Validate(ws, creator, false)
		if got := fields(err); len(got) != len(c.want) || (len(got) > 0 && (got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1])) {
			t.Errorf("%s: fields %v, want %v (%v)", c.name, got, c.want, err)
		}
	}
	if _, err := (webhookops.NewWebhookFields{URL: ptr("https://127.0.0.1:8443/h"), EventTypes: []string{"test.created"}}).Validate(ws, creator, true); err != nil {
		t.Errorf("loopback with private networks allowed: %v", err)
	}
}

func TestGracePeriod(t *testing.T) {
	for _, c := range []struct {
		hours, seconds *float64
		want           time.Duration
		bad            bool
	}{
		{nil, nil, models.WebhookSecretGraceDefault, false},
		{ptr(0.0), nil, 0, false},
		{ptr(168.0), nil, 168 * time.Hour, false},
		{nil, ptr(90.0), 90 * time.Second, false},
		{ptr(169.0), nil, 0, true},
		{ptr(1.5), nil, 0, true},
		{ptr(-1.0), nil, 0, true},
		{ptr(1.0), ptr(1.0), 0, true},
	} {
		got, err := webhookops.GracePeriod(c.hours, c.seconds)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("GracePeriod(%v, %v) = %v, %v", c.hours, c.seconds, got, err)
		}
	}
}

func TestRecoverWindow(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	retention := 90 * 24 * time.Hour
	since, until, err := webhookops.RecoverWindow(ptr("2026-11-26T10:00:00Z"), nil, now, retention)
	if err != nil || !since.Equal(now.Add(-2*time.Hour)) || !until.Equal(now) {
		t.Fatalf("%v %v %v", since, until, err)
	}
	if _, until, _ := webhookops.RecoverWindow(ptr("2026-11-26T10:00:00Z"), ptr("2027-01-01T00:00:00Z"), now, retention); !until.Equal(now) {
		t.Errorf("until in the future is not capped at now: %v", until)
	}
	for name, c := range map[string][2]*string{
		"missing since":          {nil, nil},
		"malformed":              {ptr("yesterday"), nil},
		"future":                 {ptr("2026-11-27T00:00:00Z"), nil},
		"beyond retention":       {ptr("2026-01-01T00:00:00Z"), nil},
		"since not before until": {ptr("2026-11-26T10:00:00Z"), ptr("2026-11-26T09:00:00Z")},
	} {
		if _, _, err := webhookops.RecoverWindow(c[0], c[1], now, retention); !errors.Is(err, models.ErrInvalid) {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
}

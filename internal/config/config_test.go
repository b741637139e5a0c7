package config

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse(lookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DatabaseMaxConns: 20,
		HTTPAddr:         ":8080", WorkerHTTPAddr: ":9090", ShutdownTimeout: 30 * time.Second, LogLevel: slog.LevelInfo,
		TemporalAddress: "127.0.0.1:7233", TemporalNamespace: "default", TaskQueue: "workspace-service",
		AppBaseURL:              "https://app.openlayer.com",
		WebhookRetrySchedule:    []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute},
		DeliveryRetention:       90 * 24 * time.Hour,
		WebhookDisableAfter:     120 * time.Hour,
		WebhookDisableMinSpan:   12 * time.Hour,
		WebhookMaxSubscriptions: 100,
		WebhookMaxInFlight:      10,
		RateLimitReads:          RateLimit{Rate: 50, Burst: 100},
		RateLimitWrites:         RateLimit{Rate: 10, Burst: 200},
		RateLimitEvents:         RateLimit{Rate: 100, Burst: 1000},
		RateLimitAuthFailures:   RateLimit{Rate: 20.0 / 60, Burst: 20},

		RateLimitWorkspaceFactor: 4,
		MaxAPIKeysPerWorkspace:   1000,
		MaxProjectsPerWorkspace:  10000,
		InviteTTL:                168 * time.Hour,
		PortalMaxSessions:        50,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults\n %+v\nwant\n %+v", c, want)
	}
	// Empty values read as unset.
	empty, err := Parse(lookup(map[string]string{"HTTP_ADDR": "", "LOG_LEVEL": "", "WEBHOOK_SECRET_KEY": "", "SHUTDOWN_TIMEOUT": ""}))
	if err != nil || !reflect.DeepEqual(empty, want) {
		t.Errorf("empty values: %+v, %v", empty, err)
	}
	if err := c.RequireDatabase(); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("RequireDatabase without a URL: %v", err)
	}
}

func TestParseEverySetting(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	c, err := Parse(lookup(map[string]string{
		"DATABASE_URL":                   "postgres://app:pw@db:5432/ws?sslmode=disable",
		"HTTP_ADDR":                      "0.0.0.0:8000",
		"WORKER_HTTP_ADDR":               "0.0.0.0:9000",
		"SHUTDOWN_TIMEOUT":               "30s",
		"LOG_LEVEL":                      "debug",
		"TEMPORAL_ADDRESS":               "temporal:7233",
		"TEMPORAL_NAMESPACE":             "prod",
		"TEMPORAL_TASK_QUEUE":            "q",
		"APP_BASE_URL":                   "https://app.example.com//",
		"WEBHOOK_SECRET_KEY":             base64.StdEncoding.EncodeToString(key),
		"WEBHOOK_RETRY_SCHEDULE":         " 1s, 2m ,0s",
		"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
		"DELIVERY_RETENTION":             "1000h",
		"WEBHOOK_MAX_SUBSCRIPTIONS":      "25",
		"RATE_LIMIT_READS":               "5/s:7",
		"RATE_LIMIT_WRITES":              "off",
		"RATE_LIMIT_EVENTS":              "120/m:3",
		"RATE_LIMIT_WORKSPACE_FACTOR":    "2",
		"RATE_LIMIT_AUTH_FAILURES":       "3600/h:1",
		"MAX_API_KEYS_PER_WORKSPACE":     "3",
		"MAX_PROJECTS_PER_WORKSPACE":     "4",
		"WEBHOOK_DISABLE_AFTER":          "72h",
		"WEBHOOK_DISABLE_MIN_SPAN":       "90m",
		"WEBHOOK_MAX_IN_FLIGHT":          "3",
		"DATABASE_MAX_CONNS":             "7",
		"DEBUG_ADDR":                     "127.0.0.1:6060",
		"INVITE_TTL":                     "48h",
		"PORTAL_PUBLIC_URL":              "https://hooks.example.com/webhooks/",
		"PORTAL_MAX_SESSIONS":            "5",
		"OUTBOX_START_TARGET":            "1s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DatabaseURL: "postgres://app:pw@db:5432/ws?sslmode=disable", DatabaseMaxConns: 7, DebugAddr: "127.0.0.1:6060",
		HTTPAddr: "0.0.0.0:8000", WorkerHTTPAddr: "0.0.0.0:9000", ShutdownTimeout: 30 * time.Second,
		LogLevel: slog.LevelDebug, TemporalAddress: "temporal:7233", TemporalNamespace: "prod", TaskQueue: "q",
		AppBaseURL: "https://app.example.com", WebhookSecretKeys: [][]byte{key},
		WebhookRetrySchedule:        []time.Duration{time.Second, 2 * time.Minute, 0},
		WebhookAllowPrivateNetworks: true, DeliveryRetention: 1000 * time.Hour,
		WebhookMaxSubscriptions: 25,
		WebhookDisableAfter:     72 * time.Hour, WebhookDisableMinSpan: 90 * time.Minute,
		WebhookMaxInFlight:    3,
		OutboxStartTarget:     time.Second,
		RateLimitReads:        RateLimit{Rate: 5, Burst: 7},
		RateLimitEvents:       RateLimit{Rate: 2, Burst: 3},
		RateLimitAuthFailures: RateLimit{Rate: 1, Burst: 1},

		RateLimitWorkspaceFactor: 2,
		MaxAPIKeysPerWorkspace:   3,
		MaxProjectsPerWorkspace:  4,
		InviteTTL:                48 * time.Hour,
		PortalPublicURL:          "https://hooks.example.com/webhooks",
		PortalMaxSessions:        5,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("parsed\n %+v\nwant\n %+v", c, want)
	}
	if err := c.RequireDatabase(); err != nil {
		t.Error(err)
	}

	none, err := Parse(lookup(map[string]string{"WEBHOOK_RETRY_SCHEDULE": "none"}))
	if err != nil || none.WebhookRetrySchedule == nil || len(none.WebhookRetrySchedule) != 0 {
		t.Errorf(`"none": %v, %v; want an empty schedule`, none.WebhookRetrySchedule, err)
	}
}

// Every bad value is reported in one error, each naming its variable.
func TestParseReportsEveryBadValue(t *testing.T) {
	bad := map[string]string{
		"SHUTDOWN_TIMEOUT":               "soon",
		"DELIVERY_RETENTION":             "0s",
		"LOG_LEVEL":                      "loud",
		"WEBHOOK_SECRET_KEY":             base64.StdEncoding.EncodeToString(make([]byte, 16)),
		"WEBHOOK_RETRY_SCHEDULE":         "5s,-1s",
		"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "maybe",
		"OUTBOX_START_TARGET":            "200",
	}
	_, err := Parse(lookup(bad))
	if err == nil {
		t.Fatal("no error")
	}
	for name := range bad {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	if strings.Contains(err.Error(), bad["WEBHOOK_SECRET_KEY"]) {
		t.Error("the error echoes the secret key")
	}

	for _, c := range []struct{ name, value string }{
		{"SHUTDOWN_TIMEOUT", "-5s"},
		{"OUTBOX_START_TARGET", "0s"},
		{"SHUTDOWN_TIMEOUT", "15"},
		{"DELIVERY_RETENTION", "90d"},
		{"WEBHOOK_SECRET_KEY", "not base64!"},
		{"WEBHOOK_SECRET_KEY", base64.StdEncoding.EncodeToString(make([]byte, 33))},
		{"WEBHOOK_RETRY_SCHEDULE", "5s,,1m"},
		{"WEBHOOK_RETRY_SCHEDULE", "5"},
		{"WEBHOOK_ALLOW_PRIVATE_NETWORKS", "yes"},
		{"RATE_LIMIT_READS", "50"},
		{"RATE_LIMIT_WRITES", "10/s"},
		{"RATE_LIMIT_EVENTS", "0/s:10"},
		{"RATE_LIMIT_EVENTS", "10/d:10"},
		{"RATE_LIMIT_AUTH_FAILURES", "20/m:0"},
		{"RATE_LIMIT_AUTH_FAILURES", "OFF"},
		{"RATE_LIMIT_WORKSPACE_FACTOR", "0"},
		{"MAX_API_KEYS_PER_WORKSPACE", "-1"},
		{"MAX_PROJECTS_PER_WORKSPACE", "lots"},
		{"INVITE_TTL", "a week"},
		{"INVITE_TTL", "-1h"},
		{"WEBHOOK_DISABLE_AFTER", "5d"},
		{"WEBHOOK_DISABLE_AFTER", "0s"},
		{"WEBHOOK_DISABLE_MIN_SPAN", "-1h"},
		{"WEBHOOK_DISABLE_MIN_SPAN", "200h"}, // longer than WEBHOOK_DISABLE_AFTER
		{"PORTAL_PUBLIC_URL", "hooks.example.com"},
		{"PORTAL_PUBLIC_URL", "/portal"},
		{"PORTAL_PUBLIC_URL", "ftp://hooks.example.com"},
		{"PORTAL_PUBLIC_URL", "https://hooks.example.com/?a=b"},
		{"PORTAL_PUBLIC_URL", "https://hooks.example.com/#top"},
		{"PORTAL_PUBLIC_URL", "https://user:pw@hooks.example.com"},
		{"PORTAL_PUBLIC_URL", "https://"},
		{"PORTAL_MAX_SESSIONS", "0"},
	} {
		if _, err := Parse(lookup(map[string]string{c.name: c.value})); err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s=%q: error %v", c.name, c.value, err)
		}
	}
}

// Logging the configuration never shows the database password or the
// webhook key.
func TestLogValueMasksSecrets(t *testing.T) {
	key := bytes.Repeat([]byte{0xAB}, 32)
	cases := []struct{ url, shown string }{
		{"postgres://app:s3cret@db:5432/ws?sslmode=disable", "postgres://app:***@db:5432/ws?sslmode=disable"},
		{"postgres://app:p%40ss@db/ws", "postgres://app:***@db/ws"},
		{"postgres://app:s3c@ret@db/ws", "postgres://app:***@db/ws"},
		{"postgres://app@db/ws", "postgres://app@db/ws"},
		{"postgres://db/ws", "postgres://db/ws"},
		{"app:s3cret@db/ws", "app:***@db/ws"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		cfg := Defaults()
		cfg.DatabaseURL, cfg.WebhookSecretKeys = c.url, [][]byte{key}
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("start", slog.Any("config", cfg))
		out := buf.String()
		if !strings.Contains(out, `"database":"`+c.shown+`"`) {
			t.Errorf("%s: logged %s, want database %s", c.url, out, c.shown)
		}
		for _, leak := range []string{"s3cret", "ret@", "p%40ss", base64.StdEncoding.EncodeToString(key), "q6ur"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s: the log line contains %q: %s", c.url, leak, out)
			}
		}
		if !strings.Contains(out, `"webhookSecretKeys":1`) {
			t.Errorf("log line lacks webhookSecretKeys: %s", out)
		}
	}
}

// One event's workflow must stay inside Temporal's history limits however
// the cap and the schedule are set, and retention must outlast a delivery.
func TestParseBoundsFanOutAndRetention(t *testing.T) {
	c, err := Parse(lookup(map[string]string{"WEBHOOK_MAX_SUBSCRIPTIONS": "500"}))
	if err != nil || c.WebhookMaxSubscriptions != 500 {
		t.Fatalf("500 subscriptions × 4 attempts: %v, %d", err, c.WebhookMaxSubscriptions)
	}
	for _, env := range []map[string]string{
		{"WEBHOOK_MAX_SUBSCRIPTIONS": "0"},
		{"WEBHOOK_MAX_SUBSCRIPTIONS": "many"},
		{"WEBHOOK_MAX_SUBSCRIPTIONS": "501"},                               // 501 × 4 > 2000
		{"WEBHOOK_RETRY_SCHEDULE": strings.Repeat("1s,", 20) + "1s"},       // 100 × 22 > 2000
		{"DELIVERY_RETENTION": "1h"},                                       // shorter than 35m × 1.1 + 24h
		{"DELIVERY_RETENTION": "48h", "WEBHOOK_RETRY_SCHEDULE": "24h,24h"}, // 52.8h + 24h > 48h
	} {
		if _, err := Parse(lookup(env)); err == nil {
			t.Errorf("%v: accepted", env)
		}
	}
	if got := RetrySpan([]time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute}); got != 38*time.Minute+35*time.Second+500*time.Millisecond {
		t.Errorf("RetrySpan of the default schedule = %s", got)
	}
}

// WEBHOOK_SECRET_KEY is a ring, current key first; a bad entry is named by
// its position, and no error or log line shows key material.
func TestParseSecretKeyRing(t *testing.T) {
	a, b := bytes.Repeat([]byte{0xAB}, 32), bytes.Repeat([]byte{0xCD}, 32)
	ea, eb := base64.StdEncoding.EncodeToString(a), base64.StdEncoding.EncodeToString(b)
	c, err := Parse(lookup(map[string]string{"WEBHOOK_SECRET_KEY": eb + " , " + ea}))
	if err != nil || !reflect.DeepEqual(c.WebhookSecretKeys, [][]byte{b, a}) {
		t.Fatalf("ring %x, err %v; want b then a", c.WebhookSecretKeys, err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("start", slog.Any("config", c))
	if out := buf.String(); !strings.Contains(out, `"webhookSecretKeys":2`) || strings.Contains(out, ea) || strings.Contains(out, eb) {
		t.Errorf("log line %s: want webhookSecretKeys 2 and no key", out)
	}

	for _, tc := range []struct{ value, want string }{
		{ea + "," + eb + "," + ea, "WEBHOOK_SECRET_KEY: key 3 of 3: repeats key 1"},
		{ea + ",," + eb, "WEBHOOK_SECRET_KEY: key 2 of 3: want base64"},
		{ea + ",", "WEBHOOK_SECRET_KEY: key 2 of 2: want base64"},
		{ea + "," + base64.StdEncoding.EncodeToString(b[:16]), "WEBHOOK_SECRET_KEY: key 2 of 2: want base64"},
		{"not base64!," + ea, "WEBHOOK_SECRET_KEY: key 1 of 2: want base64"},
	} {
		_, err := Parse(lookup(map[string]string{"WEBHOOK_SECRET_KEY": tc.value}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.value, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), ea) || strings.Contains(err.Error(), eb) || strings.Contains(err.Error(), "not base64!") {
			t.Errorf("%q: the error shows key material: %v", tc.value, err)
		}
	}
}

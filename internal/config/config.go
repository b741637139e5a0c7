// Package config reads the service's configuration from the environment,
// once, into one struct shared by the api, worker, admin and dev commands.
package config

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is every setting the processes read; Defaults suit local development.
type Config struct {
	DatabaseURL string // DATABASE_URL
	// DatabaseMaxConns (DATABASE_MAX_CONNS) bounds each process's pool; a
	// worker holds one more for LISTEN. The database's max_connections
	// must cover every replica's (docs/deployment.md#database-connections).
	DatabaseMaxConns int
	// DebugAddr (DEBUG_ADDR) serves net/http/pprof for profiling; empty:
	// off. Keep it on loopback: profiles show code paths and timings.
	DebugAddr string

	HTTPAddr        string        // HTTP_ADDR: API listen address
	WorkerHTTPAddr  string        // WORKER_HTTP_ADDR: worker metrics and health address
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT
	LogLevel        slog.Level    // LOG_LEVEL: debug, info, warn, error

	TemporalAddress   string // TEMPORAL_ADDRESS
	TemporalNamespace string // TEMPORAL_NAMESPACE
	TaskQueue         string // TEMPORAL_TASK_QUEUE

	AppBaseURL string // APP_BASE_URL: the web app, for project links

	// PortalPublicURL (PORTAL_PUBLIC_URL) is the scheme, host and optional
	// path prefix of minted portal links; empty: the minting request's own
	// host, which a client can set (Host header) behind a permissive proxy.
	PortalPublicURL string
	// PortalMaxSessions (PORTAL_MAX_SESSIONS) bounds a workspace's live
	// portal sessions; minting past it ends the oldest.
	PortalMaxSessions int

	// WebhookSecretKeys (WEBHOOK_SECRET_KEY) seal signing secrets at rest: the
	// first seals, all open, so a key rotates by prepending its successor.
	WebhookSecretKeys    [][]byte
	WebhookRetrySchedule []time.Duration // WEBHOOK_RETRY_SCHEDULE: waits before attempts 2, 3, ...
	// OutboxStartTarget (OUTBOX_START_TARGET), when set, turns on the
	// events relay's start limiter (outbox.StartLimiter): the p90 time of
	// a delivery workflow start above which it halves its starts in
	// flight. Off by default: it buys throughput at a cost to a quiet
	// workspace beside a flood on Temporal's own server
	// (docs/operations.md#priorities-and-fairness).
	OutboxStartTarget           time.Duration
	WebhookAllowPrivateNetworks bool          // WEBHOOK_ALLOW_PRIVATE_NETWORKS: no address filter (dev)
	WebhookMaxSubscriptions     int           // WEBHOOK_MAX_SUBSCRIPTIONS: bounds fan-out (FanOutBudget)
	DeliveryRetention           time.Duration // DELIVERY_RETENTION
	WebhookDisableAfter         time.Duration // WEBHOOK_DISABLE_AFTER (store.DisablePolicy)
	WebhookDisableMinSpan       time.Duration // WEBHOOK_DISABLE_MIN_SPAN
	// WebhookMaxInFlight (WEBHOOK_MAX_IN_FLIGHT) caps a subscription's attempts
	// in flight across replicas, so a worker back from an outage never floods it.
	WebhookMaxInFlight int

	// Rate limits per API key; a workspace's is RateLimitWorkspaceFactor times
	// a key's. Buckets live in each API replica's memory, so N replicas admit N
	// times as much. Events are POST .../events, writes other POST, PUT, DELETE.
	RateLimitReads           RateLimit // RATE_LIMIT_READS
	RateLimitWrites          RateLimit // RATE_LIMIT_WRITES
	RateLimitEvents          RateLimit // RATE_LIMIT_EVENTS
	RateLimitWorkspaceFactor int       // RATE_LIMIT_WORKSPACE_FACTOR
	// RateLimitAuthFailures (RATE_LIMIT_AUTH_FAILURES) budgets failed logins per
	// client address, refused before its key is looked up.
	RateLimitAuthFailures   RateLimit
	MaxAPIKeysPerWorkspace  int // MAX_API_KEYS_PER_WORKSPACE: unrevoked keys
	MaxProjectsPerWorkspace int // MAX_PROJECTS_PER_WORKSPACE
	// InviteTTL (INVITE_TTL) is how long a workspace invite stays pending:
	// its token is a credential sent by e-mail, so it must not live forever.
	InviteTTL time.Duration
}

// Defaults is the configuration with nothing set in the environment.
func Defaults() Config {
	return Config{
		DatabaseMaxConns: 20,
		HTTPAddr:         ":8080",
		WorkerHTTPAddr:   ":9090",
		// Longer than a delivery attempt (20 s), so a stopping worker lets
		// its attempts finish rather than another worker send them again.
		ShutdownTimeout:      30 * time.Second,
		LogLevel:             slog.LevelInfo,
		TemporalAddress:      "127.0.0.1:7233",
		TemporalNamespace:    "default",
		TaskQueue:            "workspace-service",
		AppBaseURL:           "https://app.openlayer.com",
		WebhookRetrySchedule: []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute},
		DeliveryRetention:    90 * 24 * time.Hour,
		// Svix's: five days of failures, two failed events 12 hours apart.
		WebhookDisableAfter:     5 * 24 * time.Hour,
		WebhookDisableMinSpan:   12 * time.Hour,
		WebhookMaxSubscriptions: 100,
		WebhookMaxInFlight:      10,
		// Generous bursts let setup scripts through; sustained rates bound abuse.
		RateLimitReads:           RateLimit{Rate: 50, Burst: 100},
		RateLimitWrites:          RateLimit{Rate: 10, Burst: 200},
		RateLimitEvents:          RateLimit{Rate: 100, Burst: 1000},
		RateLimitWorkspaceFactor: 4,
		RateLimitAuthFailures:    RateLimit{Rate: 20.0 / 60, Burst: 20},
		MaxAPIKeysPerWorkspace:   1000,
		MaxProjectsPerWorkspace:  10000,
		InviteTTL:                7 * 24 * time.Hour,
		PortalMaxSessions:        50,
	}
}

// FanOutBudget bounds WEBHOOK_MAX_SUBSCRIPTIONS × attempts per delivery. At
// about 11 history events per attempt, one event's workflow then stays near
// 22,000 events and 2,000 pending activities, inside Temporal's limits.
const FanOutBudget = 2000

// MinRetentionMargin is how much longer than the retry schedule records are
// kept, so retention never deletes a delivery still under way: an attempt may
// wait out workflows.OutageTolerance (30 days), plus a day of slack.
const MinRetentionMargin = 31 * 24 * time.Hour

// RetrySpan is the longest a schedule lasts, each wait up to 10% longer (jitter).
func RetrySpan(schedule []time.Duration) time.Duration {
	var total time.Duration
	for _, d := range schedule {
		total += d + d/10
	}
	return total
}

// FromEnv reads the configuration from the process environment.
func FromEnv() (Config, error) { return Parse(os.LookupEnv) }

// Parse reads the configuration through lookup, reporting every bad value.
func Parse(lookup func(string) (string, bool)) (Config, error) {
	c := Defaults()
	var errs []error
	str := func(name string, dst *string) {
		if v, ok := lookup(name); ok && v != "" {
			*dst = v
		}
	}
	dur := func(name string, dst *time.Duration) {
		if v, ok := lookup(name); ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				errs = append(errs, fmt.Errorf("%s: want a positive Go duration such as 30s, got %q", name, v))
				return
			}
			*dst = d
		}
	}
	str("DATABASE_URL", &c.DatabaseURL)
	str("HTTP_ADDR", &c.HTTPAddr)
	str("WORKER_HTTP_ADDR", &c.WorkerHTTPAddr)
	str("DEBUG_ADDR", &c.DebugAddr)
	dur("SHUTDOWN_TIMEOUT", &c.ShutdownTimeout)
	str("TEMPORAL_ADDRESS", &c.TemporalAddress)
	str("TEMPORAL_NAMESPACE", &c.TemporalNamespace)
	str("TEMPORAL_TASK_QUEUE", &c.TaskQueue)
	str("APP_BASE_URL", &c.AppBaseURL)
	c.AppBaseURL = strings.TrimRight(c.AppBaseURL, "/")
	dur("DELIVERY_RETENTION", &c.DeliveryRetention)
	dur("OUTBOX_START_TARGET", &c.OutboxStartTarget)
	dur("WEBHOOK_DISABLE_AFTER", &c.WebhookDisableAfter)
	dur("WEBHOOK_DISABLE_MIN_SPAN", &c.WebhookDisableMinSpan)
	dur("INVITE_TTL", &c.InviteTTL)
	if v, ok := lookup("PORTAL_PUBLIC_URL"); ok && v != "" {
		u, err := ParsePublicURL(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("PORTAL_PUBLIC_URL: %w", err))
		}
		c.PortalPublicURL = u
	}

	if v, ok := lookup("LOG_LEVEL"); ok && v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			errs = append(errs, fmt.Errorf("LOG_LEVEL: want debug, info, warn or error, got %q", v))
		}
	}
	if v, ok := lookup("WEBHOOK_SECRET_KEY"); ok && v != "" {
		keys, err := parseSecretKeys(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("WEBHOOK_SECRET_KEY: %w", err))
		} else {
			c.WebhookSecretKeys = keys
		}
	}
	if v, ok := lookup("WEBHOOK_RETRY_SCHEDULE"); ok && v != "" {
		sched, err := ParseSchedule(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("WEBHOOK_RETRY_SCHEDULE: %w", err))
		} else {
			c.WebhookRetrySchedule = sched
		}
	}
	if v, ok := lookup("WEBHOOK_ALLOW_PRIVATE_NETWORKS"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("WEBHOOK_ALLOW_PRIVATE_NETWORKS: want true or false, got %q", v))
		}
		c.WebhookAllowPrivateNetworks = b
	}
	if v, ok := lookup("WEBHOOK_MAX_SUBSCRIPTIONS"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("WEBHOOK_MAX_SUBSCRIPTIONS: want a positive integer, got %q", v))
		} else {
			c.WebhookMaxSubscriptions = n
		}
	}
	limit := func(name string, dst *RateLimit) {
		if v, ok := lookup(name); ok && v != "" {
			l, err := ParseRateLimit(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				return
			}
			*dst = l
		}
	}
	limit("RATE_LIMIT_READS", &c.RateLimitReads)
	limit("RATE_LIMIT_WRITES", &c.RateLimitWrites)
	limit("RATE_LIMIT_EVENTS", &c.RateLimitEvents)
	limit("RATE_LIMIT_AUTH_FAILURES", &c.RateLimitAuthFailures)
	positive := func(name string, dst *int) {
		if v, ok := lookup(name); ok && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				errs = append(errs, fmt.Errorf("%s: want a positive integer, got %q", name, v))
				return
			}
			*dst = n
		}
	}
	positive("RATE_LIMIT_WORKSPACE_FACTOR", &c.RateLimitWorkspaceFactor)
	positive("MAX_API_KEYS_PER_WORKSPACE", &c.MaxAPIKeysPerWorkspace)
	positive("MAX_PROJECTS_PER_WORKSPACE", &c.MaxProjectsPerWorkspace)
	positive("WEBHOOK_MAX_IN_FLIGHT", &c.WebhookMaxInFlight)
	positive("DATABASE_MAX_CONNS", &c.DatabaseMaxConns)
	positive("PORTAL_MAX_SESSIONS", &c.PortalMaxSessions)
	if attempts := len(c.WebhookRetrySchedule) + 1; c.WebhookMaxSubscriptions > FanOutBudget/attempts {
		errs = append(errs, fmt.Errorf("WEBHOOK_MAX_SUBSCRIPTIONS (%d) × attempts per delivery (%d, from WEBHOOK_RETRY_SCHEDULE) must be at most %d, so one event's workflow stays inside Temporal's history limits",
			c.WebhookMaxSubscriptions, attempts, FanOutBudget))
	}
	if c.WebhookDisableMinSpan > c.WebhookDisableAfter {
		errs = append(errs, fmt.Errorf("WEBHOOK_DISABLE_MIN_SPAN (%s) must be at most WEBHOOK_DISABLE_AFTER (%s): the two failed events it separates fall inside that window",
			c.WebhookDisableMinSpan, c.WebhookDisableAfter))
	}
	if min := RetrySpan(c.WebhookRetrySchedule) + MinRetentionMargin; c.DeliveryRetention < min {
		errs = append(errs, fmt.Errorf("DELIVERY_RETENTION (%s) must be at least the retry schedule's span plus %s (%s), so retention never deletes a delivery still under way",
			c.DeliveryRetention, MinRetentionMargin, min.Round(time.Second)))
	}
	return c, errors.Join(errs...)
}

// parseSecretKeys reads the key ring, current key first. Errors name a key by
// position and never show what was given: that is key material.
func parseSecretKeys(s string) ([][]byte, error) {
	parts := strings.Split(s, ",")
	keys := make([][]byte, len(parts))
	var errs []error
	for i, part := range parts {
		where := ""
		if len(parts) > 1 {
			where = fmt.Sprintf("key %d of %d: ", i+1, len(parts))
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(part))
		if err != nil || len(key) != 32 {
			errs = append(errs, fmt.Errorf("%swant base64 of exactly 32 random bytes (openssl rand -base64 32)", where))
			continue
		}
		for j := range i {
			if bytes.Equal(key, keys[j]) {
				errs = append(errs, fmt.Errorf("%srepeats key %d", where, j+1))
			}
		}
		keys[i] = key
	}
	return keys, errors.Join(errs...)
}

// ParsePublicURL checks an origin with an optional path prefix, such as
// https://hooks.example.com or https://example.com/webhooks: absolute http or
// https, a host, no credentials, query or fragment. It returns it without a
// trailing slash, ready for a path to be appended.
func ParsePublicURL(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("want an absolute http(s) URL such as https://hooks.example.com, got %q", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("want an http or https URL, got scheme %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("want an absolute URL with a host, got %q", s)
	case u.User != nil:
		return "", errors.New("must not hold credentials")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return "", fmt.Errorf("must have no query or fragment, got %q", s)
	case u.Opaque != "":
		return "", fmt.Errorf("want an absolute http(s) URL such as https://hooks.example.com, got %q", s)
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

// ParseSchedule parses comma-separated Go durations such as "5s,5m,30m".
// An empty schedule (a single attempt) is written "none".
func ParseSchedule(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "none" {
		return []time.Duration{}, nil
	}
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("want comma-separated non-negative Go durations such as 5s,5m,30m, got %q", s)
		}
		out = append(out, d)
	}
	return out, nil
}

// FormatSchedule writes a schedule the way ParseSchedule reads it.
func FormatSchedule(s []time.Duration) string {
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

// RequireDatabase reports a missing DATABASE_URL in words an operator can act on.
func (c Config) RequireDatabase() error {
	if c.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set (e.g. postgres://user:pass@host:5432/db?sslmode=disable)")
	}
	return nil
}

// LogValue masks secrets so the configuration can be logged at start-up.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("database", maskURL(c.DatabaseURL)),
		slog.String("httpAddr", c.HTTPAddr),
		slog.String("workerHttpAddr", c.WorkerHTTPAddr),
		slog.String("temporalAddress", c.TemporalAddress),
		slog.String("temporalNamespace", c.TemporalNamespace),
		slog.String("taskQueue", c.TaskQueue),
		slog.String("appBaseUrl", c.AppBaseURL),
		slog.Int("webhookSecretKeys", len(c.WebhookSecretKeys)),
		slog.String("webhookRetrySchedule", FormatSchedule(c.WebhookRetrySchedule)),
		slog.Duration("outboxStartTarget", c.OutboxStartTarget),
		slog.Bool("webhookAllowPrivateNetworks", c.WebhookAllowPrivateNetworks),
		slog.Int("webhookMaxSubscriptions", c.WebhookMaxSubscriptions),
		slog.Int("webhookMaxInFlight", c.WebhookMaxInFlight),
		slog.Int("databaseMaxConns", c.DatabaseMaxConns),
		slog.String("debugAddr", c.DebugAddr),
		slog.Duration("deliveryRetention", c.DeliveryRetention),
		slog.Duration("webhookDisableAfter", c.WebhookDisableAfter),
		slog.Duration("webhookDisableMinSpan", c.WebhookDisableMinSpan),
		slog.String("rateLimitReads", c.RateLimitReads.String()),
		slog.String("rateLimitWrites", c.RateLimitWrites.String()),
		slog.String("rateLimitEvents", c.RateLimitEvents.String()),
		slog.Int("rateLimitWorkspaceFactor", c.RateLimitWorkspaceFactor),
		slog.String("rateLimitAuthFailures", c.RateLimitAuthFailures.String()),
		slog.Int("maxApiKeysPerWorkspace", c.MaxAPIKeysPerWorkspace),
		slog.Int("maxProjectsPerWorkspace", c.MaxProjectsPerWorkspace),
		slog.Duration("inviteTtl", c.InviteTTL),
		slog.String("portalPublicUrl", c.PortalPublicURL),
		slog.Int("portalMaxSessions", c.PortalMaxSessions),
	)
}

// maskURL hides the password of a connection URL.
func maskURL(u string) string {
	at := strings.LastIndex(u, "@")
	if at < 0 {
		return u
	}
	// A malformed URL without a scheme starts with the credentials.
	start := 0
	if scheme := strings.Index(u[:at], "://"); scheme >= 0 {
		start = scheme + 3
	}
	creds := u[start:at]
	if i := strings.Index(creds, ":"); i >= 0 {
		return u[:start] + creds[:i] + ":***" + u[at:]
	}
	return u
}

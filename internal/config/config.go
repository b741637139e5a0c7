// Package config reads the service's configuration from the environment,
// once, into one struct shared by the api, worker, admin and dev commands.
package config

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is every setting the processes read. Defaults suit local
// development; production sets the environment explicitly.
type Config struct {
	DatabaseURL string // DATABASE_URL

	HTTPAddr        string        // HTTP_ADDR: API listen address
	WorkerHTTPAddr  string        // WORKER_HTTP_ADDR: worker metrics and health address
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT
	LogLevel        slog.Level    // LOG_LEVEL: debug, info, warn, error

	TemporalAddress   string // TEMPORAL_ADDRESS
	TemporalNamespace string // TEMPORAL_NAMESPACE
	TaskQueue         string // TEMPORAL_TASK_QUEUE

	AppBaseURL string // APP_BASE_URL: the web app, for project links

	// WebhookSecretKeys encrypt webhook signing secrets at rest
	// (WEBHOOK_SECRET_KEY, comma-separated base64 of 32 bytes each). The
	// first seals new secrets; every one opens existing secrets, so a key
	// is rotated by prepending its successor.
	WebhookSecretKeys [][]byte
	// WebhookRetrySchedule holds the waits before attempts 2, 3, ...
	// (WEBHOOK_RETRY_SCHEDULE, comma-separated Go durations).
	WebhookRetrySchedule []time.Duration
	// WebhookAllowPrivateNetworks lifts the outbound address filter
	// (WEBHOOK_ALLOW_PRIVATE_NETWORKS), for local development and tests.
	WebhookAllowPrivateNetworks bool
	// WebhookMaxSubscriptions caps the subscriptions of one workspace
	// (WEBHOOK_MAX_SUBSCRIPTIONS), and so the fan-out of one event's
	// workflow; see FanOutBudget.
	WebhookMaxSubscriptions int
	// DeliveryRetention is how long delivery records are kept
	// (DELIVERY_RETENTION, a Go duration).
	DeliveryRetention time.Duration
	// WebhookDisableAfter disables a subscription whose every attempt has
	// failed for this long (WEBHOOK_DISABLE_AFTER), provided the failures
	// span two events at least WebhookDisableMinSpan apart
	// (WEBHOOK_DISABLE_MIN_SPAN); one success resets the window.
	WebhookDisableAfter   time.Duration
	WebhookDisableMinSpan time.Duration
	// WebhookMaxInFlight caps one subscription's delivery attempts in
	// flight at once across every worker replica (WEBHOOK_MAX_IN_FLIGHT),
	// so a worker back from an outage never floods one receiver.
	WebhookMaxInFlight int

	// Rate limits per API key (RATE_LIMIT_READS, RATE_LIMIT_WRITES,
	// RATE_LIMIT_EVENTS); a workspace's budget is RateLimitWorkspaceFactor
	// (RATE_LIMIT_WORKSPACE_FACTOR) times its key's. Events are POST
	// .../events; writes are every other POST, PUT and DELETE. Buckets live
	// in each API replica's memory, so N replicas admit N times as much.
	RateLimitReads           RateLimit
	RateLimitWrites          RateLimit
	RateLimitEvents          RateLimit
	RateLimitWorkspaceFactor int
	// RateLimitAuthFailures budgets failed authentications per client
	// address (RATE_LIMIT_AUTH_FAILURES); an address past it is refused
	// before its key is looked up.
	RateLimitAuthFailures RateLimit
	// Caps on what one workspace may hold (MAX_API_KEYS_PER_WORKSPACE
	// counts keys not revoked, MAX_PROJECTS_PER_WORKSPACE).
	MaxAPIKeysPerWorkspace  int
	MaxProjectsPerWorkspace int
}

// Defaults is the configuration with nothing set in the environment.
func Defaults() Config {
	return Config{
		HTTPAddr:       ":8080",
		WorkerHTTPAddr: ":9090",
		// Longer than a delivery attempt can take (20 s), so a stopping
		// worker lets its in-flight attempts finish instead of leaving
		// them for another worker to send again.
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
		// The bursts are generous so that setup scripts and the fault
		// suite (100 subscriptions, then 1,000 events at once from one
		// key) pass; the sustained rates are what bound abuse.
		RateLimitReads:           RateLimit{Rate: 50, Burst: 100},
		RateLimitWrites:          RateLimit{Rate: 10, Burst: 200},
		RateLimitEvents:          RateLimit{Rate: 100, Burst: 1000},
		RateLimitWorkspaceFactor: 4,
		RateLimitAuthFailures:    RateLimit{Rate: 20.0 / 60, Burst: 20},
		MaxAPIKeysPerWorkspace:   1000,
		MaxProjectsPerWorkspace:  10000,
	}
}

// FanOutBudget bounds WEBHOOK_MAX_SUBSCRIPTIONS × attempts per delivery
// (the schedule's waits plus one). One event's workflow runs one activity
// per recipient at a time and about 11 history events per attempt at
// worst (activity scheduled, started, completed; timer started, fired; two
// workflow tasks), so at this budget the worst case, every endpoint failing
// the whole schedule, stays near 22,000 events and 2,000 pending
// activities: inside Temporal's limits (51,200 events; 2,000 pending
// activities is the server's error limit, reached only at a one-attempt
// schedule). The default, 100 × 4 attempts, uses a fifth of it.
const FanOutBudget = 2000

// MinRetentionMargin is how much longer than the retry schedule delivery
// records must be kept, so retention never deletes an event or the records
// of a delivery still under way: an attempt may wait out an outage for up
// to workflows.OutageTolerance (30 days), plus a day of slack. A workflows
// test keeps the two in step.
const MinRetentionMargin = 31 * 24 * time.Hour

// RetrySpan is the longest a delivery's schedule lasts: the sum of its
// waits, each up to 10% longer with jitter.
func RetrySpan(schedule []time.Duration) time.Duration {
	var total time.Duration
	for _, d := range schedule {
		total += d + d/10
	}
	return total
}

// FromEnv reads the configuration from the process environment.
func FromEnv() (Config, error) { return Parse(os.LookupEnv) }

// Parse reads the configuration through lookup, so tests need not touch the
// real environment. Every bad value is reported, not just the first.
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
	dur("SHUTDOWN_TIMEOUT", &c.ShutdownTimeout)
	str("TEMPORAL_ADDRESS", &c.TemporalAddress)
	str("TEMPORAL_NAMESPACE", &c.TemporalNamespace)
	str("TEMPORAL_TASK_QUEUE", &c.TaskQueue)
	str("APP_BASE_URL", &c.AppBaseURL)
	c.AppBaseURL = strings.TrimRight(c.AppBaseURL, "/")
	dur("DELIVERY_RETENTION", &c.DeliveryRetention)
	dur("WEBHOOK_DISABLE_AFTER", &c.WebhookDisableAfter)
	dur("WEBHOOK_DISABLE_MIN_SPAN", &c.WebhookDisableMinSpan)

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

// parseSecretKeys reads the key ring: comma-separated base64 of 32 bytes
// each, current key first. Errors name a key by its position and never
// show what was given, since that is key material.
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
		slog.Bool("webhookAllowPrivateNetworks", c.WebhookAllowPrivateNetworks),
		slog.Int("webhookMaxSubscriptions", c.WebhookMaxSubscriptions),
		slog.Int("webhookMaxInFlight", c.WebhookMaxInFlight),
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
	)
}

// maskURL hides the password of a connection URL.
func maskURL(u string) string {
	at := strings.LastIndex(u, "@")
	if at < 0 {
		return u
	}
	// Without a scheme (a malformed URL) the credentials start the string;
	// the password must stay hidden all the same.
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

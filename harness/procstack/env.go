package procstack

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
)

// The databases and users of the compose deployment (docker-compose.yml's
// postgres and temporal-postgres services), which the stack creates the
// same way. Both users are superusers there (the image's POSTGRES_USER),
// and here.
const (
	appDBUser            = "workspace"
	appDBName            = "workspace"
	temporalDBUser       = "temporal"
	temporalDBName       = "temporal"
	temporalVisibilityDB = "temporal_visibility"
)

// appDefaults are the values docker-compose.yml's x-app-env gives the api,
// worker and migrate services when .env leaves the optional settings
// unset (deploy/env.example), except the addresses, which appEnv sets.
// TestComposeEnvironment keeps the two equal.
var appDefaults = map[string]string{
	"TEMPORAL_NAMESPACE":          "default",
	"TEMPORAL_TASK_QUEUE":         "workspace-service",
	"APP_BASE_URL":                "https://app.openlayer.com",
	"WEBHOOK_RETRY_SCHEDULE":      "5s,5m,30m",
	"WEBHOOK_MAX_SUBSCRIPTIONS":   "100",
	"DELIVERY_RETENTION":          "2160h",
	"WEBHOOK_DISABLE_AFTER":       "120h",
	"WEBHOOK_DISABLE_MIN_SPAN":    "12h",
	"WEBHOOK_MAX_IN_FLIGHT":       "10",
	"RATE_LIMIT_READS":            "50/s:100",
	"RATE_LIMIT_WRITES":           "10/s:200",
	"RATE_LIMIT_EVENTS":           "100/s:1000",
	"RATE_LIMIT_WORKSPACE_FACTOR": "4",
	"RATE_LIMIT_AUTH_FAILURES":    "20/m:20",
	"MAX_API_KEYS_PER_WORKSPACE":  "1000",
	"MAX_PROJECTS_PER_WORKSPACE":  "10000",
	"INVITE_TTL":                  "168h",
	"PORTAL_PUBLIC_URL":           "",
	"PORTAL_MAX_SESSIONS":         "50",
	"OUTBOX_START_TARGET":         "",
	"LOG_LEVEL":                   "info",
	"DATABASE_MAX_CONNS":          "20",
	"DEBUG_ADDR":                  "",
	"SHUTDOWN_TIMEOUT":            "30s",
	// Compose says false: its receivers are on the internet. A loopback
	// stack's receivers are on loopback (the one exception of value).
	"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
}

// appPGSettings and temporalPGSettings are the server settings compose's
// postgres and temporal-postgres services start with (their command;
// TestComposeEnvironment keeps them equal). max_connections covers the
// replicas docs/deployment.md#database-connections sizes for: 4 api and
// 8 worker processes at DATABASE_MAX_CONNS=20 hold up to 4×20 + 8×21 =
// 248 connections to the application's database; one Temporal server
// process up to 4 services × (SQL_MAX_CONNS 20 + SQL_VIS_MAX_CONNS 10) =
// 120 to its own.
var (
	appPGSettings      = []string{"max_connections=300"}
	temporalPGSettings = []string{"max_connections=200"}
)

// appAddrs are what differs between two processes of the service.
type appAddrs struct {
	DatabaseURL string
	HTTP        string // HTTP_ADDR: the API's listen address
	WorkerHTTP  string // WORKER_HTTP_ADDR: the worker's metrics and health
	Temporal    string // TEMPORAL_ADDRESS
	SecretKey   string // WEBHOOK_SECRET_KEY, shared by every process
	// OTLP is the trace backend's OTLP gRPC receiver (empty: tracing off).
	OTLP string
}

// traceDefaults are the tracing variables compose's x-app-env sets beside
// OTEL_EXPORTER_OTLP_ENDPOINT (its jaeger service), with .env's optional
// settings unset; the stack sets them only when it runs Jaeger, so a
// stack without it (the fault suite's, the benchmark's) traces nothing.
var traceDefaults = map[string]string{
	"OTEL_TRACES_EXPORTER": "otlp",
	"OTEL_TRACES_SAMPLER":  "parentbased_always_on",
}

// appEnv is the environment of an api, worker or admin process: every
// variable of compose's x-app-env, then o's settings, then o.Env (later
// entries win: exec keeps the last of duplicate keys).
func appEnv(a appAddrs, o Options) []string {
	env := maps.Clone(appDefaults)
	env["DATABASE_URL"] = a.DatabaseURL
	env["HTTP_ADDR"] = a.HTTP
	env["WORKER_HTTP_ADDR"] = a.WorkerHTTP
	env["TEMPORAL_ADDRESS"] = a.Temporal
	env["WEBHOOK_SECRET_KEY"] = a.SecretKey
	if a.OTLP != "" {
		maps.Copy(env, traceDefaults)
		env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://" + a.OTLP
	}
	if o.TaskQueue != "" {
		env["TEMPORAL_TASK_QUEUE"] = o.TaskQueue
	}
	if o.RetrySchedule != "" {
		env["WEBHOOK_RETRY_SCHEDULE"] = o.RetrySchedule
	}
	if o.ShutdownTimeout != 0 {
		env["SHUTDOWN_TIMEOUT"] = o.ShutdownTimeout.String()
	}
	if o.CertFile != "" {
		env["SSL_CERT_FILE"] = o.CertFile
	}
	return append(envList(env), o.Env...)
}

// appDatabaseURL is DATABASE_URL: compose's, on a loopback port.
func appDatabaseURL(port int, password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(appDBUser, password),
		Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: "/" + appDBName, RawQuery: "sslmode=disable"}
	return u.String()
}

// temporalPorts are the server's listeners: compose runs them in one
// container on Temporal's default ports; on a shared loopback each is a
// free port, passed through the variables of the server's embedded
// configuration template.
var temporalPorts = []string{
	"FRONTEND_GRPC_PORT", "FRONTEND_HTTP_PORT", "FRONTEND_MEMBERSHIP_PORT",
	"HISTORY_GRPC_PORT", "HISTORY_MEMBERSHIP_PORT",
	"MATCHING_GRPC_PORT", "MATCHING_MEMBERSHIP_PORT",
	"WORKER_GRPC_PORT", "WORKER_MEMBERSHIP_PORT",
}

// temporalServer is how the stack runs Temporal's server.
type temporalServer struct {
	PGPort        int
	Password      string
	DynamicConfig string         // deploy/temporal/dynamicconfig.yaml
	Ports         map[string]int // temporalPorts
	MetricsAddr   string         // PROMETHEUS_ENDPOINT
}

// temporalServerEnv is the environment of the server: the variables
// compose's temporal service sets, read by the embedded configuration
// template the server image also starts from (no --config-file), plus
// the listen ports.
func temporalServerEnv(t temporalServer) []string {
	env := map[string]string{
		"DB":                "postgres12",
		"DB_PORT":           strconv.Itoa(t.PGPort),
		"POSTGRES_SEEDS":    host,
		"POSTGRES_USER":     temporalDBUser,
		"POSTGRES_PWD":      t.Password,
		"DBNAME":            temporalDBName,
		"VISIBILITY_DBNAME": temporalVisibilityDB,
		// Per service (4 in the process): temporalPGSettings is sized from them.
		"SQL_MAX_CONNS":          "20",
		"SQL_MAX_IDLE_CONNS":     "20",
		"SQL_VIS_MAX_CONNS":      "10",
		"SQL_VIS_MAX_IDLE_CONNS": "10",
		// As compose: docker-compose.yml says what 1 and 16 measured.
		"NUM_HISTORY_SHARDS":       "4",
		"BIND_ON_IP":               host,
		"DYNAMIC_CONFIG_FILE_PATH": t.DynamicConfig,
		"PROMETHEUS_ENDPOINT":      t.MetricsAddr,
	}
	for _, name := range temporalPorts {
		env[name] = strconv.Itoa(t.Ports[name])
	}
	return envList(env)
}

// schemaEnv is the environment of deploy/temporal/setup-schema.sh, as
// compose's temporal-schema service sets it; path puts the stack's
// temporal-sql-tool first on PATH, where the admin-tools image has its own.
func schemaEnv(pgPort int, password, path string) []string {
	return envList(map[string]string{
		"SQL_HOST":     host,
		"SQL_PORT":     strconv.Itoa(pgPort),
		"SQL_USER":     temporalDBUser,
		"SQL_PASSWORD": password,
		"PATH":         path,
	})
}

// envList turns a map into KEY=value lines, sorted for stable logs.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, fmt.Sprintf("%s=%s", k, env[k]))
	}
	return out
}

// Package testenv runs the whole service for end-to-end tests: one embedded
// Temporal server per test binary, and per test a fresh PostgreSQL database,
// the real API and worker processes on loopback ports (each test on its own
// task queue), and a bootstrapped workspace with an admin key.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/app"
	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

var (
	temporalOnce sync.Once
	temporalSrv  *devtemporal.Server
	temporalErr  error
)

// Main runs the tests, then stops the shared servers.
func Main(m *testing.M) {
	pgtest.Main(m)
	if temporalSrv != nil {
		temporalSrv.Stop()
	}
}

// Temporal returns the address of the test binary's embedded Temporal server.
func Temporal(t testing.TB) string {
	t.Helper()
	temporalOnce.Do(func() {
		temporalSrv, temporalErr = devtemporal.Start(devtemporal.Options{Namespace: "default"})
	})
	if temporalErr != nil {
		t.Fatalf("testenv: start temporal: %v", temporalErr)
	}
	return temporalSrv.Addr()
}

// Env is a running service.
type Env struct {
	// BaseURL ends in /v1.
	BaseURL     string
	WorkspaceID uuid.UUID
	AdminUserID uuid.UUID
	AdminKeyID  uuid.UUID
	AdminKey    string
	Config      config.Config
	Store       *store.Store
	DB          *bun.DB
	Temporal    client.Client
	WorkerAddr  string

	stopWorker func()
	logs       *logBuffer
}

// Logs is everything the processes of e have logged so far, at debug
// level and above (tests search it, e.g. for leaked secrets).
func (e *Env) Logs() string { return e.logs.String() }

// Start runs a service for t, stopped when t ends. tweak may adjust the
// configuration before the processes start.
func Start(t testing.TB, tweak ...func(*config.Config)) *Env {
	t.Helper()
	cfg := config.Defaults()
	cfg.DatabaseURL = pgtest.NewURL(t)
	cfg.TemporalAddress = Temporal(t)
	cfg.TaskQueue = "test-" + randomHex(6)
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.WorkerHTTPAddr = "127.0.0.1:0"
	cfg.ShutdownTimeout = 5 * time.Second
	cfg.WebhookSecretKeys = [][]byte{randomBytes(32)}
	cfg.WebhookAllowPrivateNetworks = true
	// End-to-end tests and benchmarks send thousands of requests with one
	// key from one address; a test of the limits sets them in tweak.
	cfg.RateLimitReads = config.RateLimit{}
	cfg.RateLimitWrites = config.RateLimit{}
	cfg.RateLimitEvents = config.RateLimit{}
	cfg.RateLimitAuthFailures = config.RateLimit{}
	for _, f := range tweak {
		f(&cfg)
	}
	logs := &logBuffer{}
	log := logger(logs)

	db, err := store.Open(cfg.DatabaseURL, cfg.DatabaseMaxConns)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	creds, err := st.Bootstrap(ctx, "Test workspace", "admin-"+randomHex(4)+"@example.com")
	if err != nil {
		t.Fatalf("testenv: bootstrap: %v", err)
	}

	apiProc, err := app.NewAPI(cfg, log)
	if err != nil {
		t.Fatalf("testenv: api: %v", err)
	}
	workerProc, err := app.NewWorker(cfg, log)
	if err != nil {
		t.Fatalf("testenv: worker: %v", err)
	}
	apiStop := run(t, "api", apiProc.Run)
	workerStop := run(t, "worker", workerProc.Run)
	tc, err := client.Dial(client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace})
	if err != nil {
		t.Fatalf("testenv: temporal client: %v", err)
	}
	// Cleanups run last-in first-out: stop the processes before the
	// database they use is dropped.
	t.Cleanup(func() {
		tc.Close()
		workerStop()
		apiStop()
		db.Close()
	})
	return &Env{
		BaseURL:     "http://" + apiProc.Addr() + "/v1",
		WorkspaceID: creds.WorkspaceID,
		AdminUserID: creds.UserID,
		AdminKeyID:  creds.APIKeyID,
		AdminKey:    creds.Secret,
		Config:      cfg,
		Store:       st,
		DB:          db,
		Temporal:    tc,
		WorkerAddr:  workerProc.Addr(),
		stopWorker:  workerStop,
		logs:        logs,
	}
}

// StopWorker stops the worker process early, for tests of what must hold
// with no worker running.
func (e *Env) StopWorker() { e.stopWorker() }

// StartAPI runs one more API process on e's database and task queue, with
// tweak applied to a copy of e's configuration (say, a Temporal address
// nothing listens on), stopped when t ends. The returned Env is e with its
// requests sent to the new process.
func (e *Env) StartAPI(t testing.TB, tweak ...func(*config.Config)) *Env {
	t.Helper()
	cfg := e.Config
	cfg.HTTPAddr = "127.0.0.1:0"
	for _, f := range tweak {
		f(&cfg)
	}
	proc, err := app.NewAPI(cfg, logger(e.logs))
	if err != nil {
		t.Fatalf("testenv: api: %v", err)
	}
	// Registered after Start's cleanup, so it runs first: the process
	// stops before its database is dropped.
	t.Cleanup(run(t, "api", proc.Run))
	other := *e
	other.BaseURL = "http://" + proc.Addr() + "/v1"
	other.Config = cfg
	return &other
}

// Worker is a worker process started by StartWorker.
type Worker struct {
	// Addr serves the worker's /metrics and health.
	Addr string
	stop func()
}

// Stop stops the worker and waits for it.
func (w *Worker) Stop() { w.stop() }

// StartWorker runs one more worker process on the environment's database,
// Temporal and task queue, with its configuration adjusted by tweak (say,
// another WEBHOOK_SECRET_KEY); it stops when t ends, if not before.
func (e *Env) StartWorker(t testing.TB, tweak ...func(*config.Config)) *Worker {
	t.Helper()
	cfg := e.Config
	cfg.WorkerHTTPAddr = "127.0.0.1:0"
	for _, f := range tweak {
		f(&cfg)
	}
	p, err := app.NewWorker(cfg, logger(e.logs))
	if err != nil {
		t.Fatalf("testenv: worker: %v", err)
	}
	stop := run(t, "worker", p.Run)
	t.Cleanup(stop)
	return &Worker{Addr: p.Addr(), stop: stop}
}

// AddMember adds a user with role to the workspace and returns its key.
func (e *Env) AddMember(t *testing.T, role models.Role) store.Credentials {
	t.Helper()
	creds, err := e.Store.AddMember(context.Background(), e.WorkspaceID, randomHex(4)+"@example.com", role)
	if err != nil {
		t.Fatalf("testenv: add member: %v", err)
	}
	return creds
}

// Do sends a request with key as the bearer token (none when empty) and a
// JSON body (none when nil; raw bytes when a []byte or string), and returns
// the status and body.
func (e *Env) Do(t testing.TB, method, path, key string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.BaseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// DoJSON is Do that decodes a response body into out (when out is non-nil)
// and fails the test unless the status is want.
func (e *Env) DoJSON(t testing.TB, method, path, key string, body any, want int, out any) {
	t.Helper()
	status, raw := e.Do(t, method, path, key, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// run starts a process and returns a function that stops it and waits.
func run(t testing.TB, name string, f func(context.Context) error) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f(ctx); err != nil && ctx.Err() == nil {
			// The test may be over; report without t, which would panic then.
			slog.Error("testenv: process failed", slog.String("process", name), slog.Any("error", err))
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Errorf("testenv: %s did not stop within 15s", name)
			}
		})
	}
}

// logger discards process logs unless TEST_LOG is set, so test output stays
// readable while a failing run can still be traced.
func logger(into *logBuffer) *slog.Logger {
	var w io.Writer = into
	if os.Getenv("TEST_LOG") != "" {
		w = io.MultiWriter(into, os.Stderr)
	}
	return slog.New(tracing.LogHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})))
}

// logBuffer collects the processes' log lines; they log concurrently.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

package procstack

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/harness/devpg"
	"github.com/openlayer-ai/workspace-service/harness/freeport"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// host is where every process of the stack listens.
const host = "127.0.0.1"

// Options configure Start.
type Options struct {
	// Dir receives the logs and the PostgreSQL and Temporal data. The
	// PostgreSQL server user must be able to traverse it.
	Dir string
	// Bin holds the binaries BuildBinaries built (and, with
	// TemporalServer, BuildServerBinaries).
	Bin string
	// TemporalServer runs Temporal's own server on a PostgreSQL cluster
	// of its own, as docker-compose.yml does, instead of devtemporal on a
	// SQLite file.
	TemporalServer bool
	// APIs and Workers are how many api and worker processes run
	// (default 1 each), on one database, Temporal and task queue.
	APIs, Workers int
	// Deploy is the repository's deploy folder (Temporal's schema script
	// and dynamic configuration); empty: found from the module root.
	Deploy string
	// CertFile is a PEM the worker trusts for webhook receivers
	// (SSL_CERT_FILE); empty: the system pool only.
	CertFile string
	// TaskQueue is TEMPORAL_TASK_QUEUE; empty keeps compose's.
	TaskQueue string
	// RetrySchedule is WEBHOOK_RETRY_SCHEDULE; empty keeps compose's.
	RetrySchedule string
	// ShutdownTimeout is SHUTDOWN_TIMEOUT (default 30s); Stop waits that
	// long, plus 5 s, for each process.
	ShutdownTimeout time.Duration
	// Debug gives every api and worker process a DEBUG_ADDR of its own
	// (Proc.DebugAddr) to profile it through net/http/pprof.
	Debug bool
	// PGSettings are more server settings for the application's
	// PostgreSQL (shared_preload_libraries=pg_stat_statements, to profile).
	PGSettings []string
	// Traces runs Jaeger (BuildJaeger) as compose's jaeger service, on
	// deploy/jaeger/config.yaml, and points the api's and the worker's
	// OTLP exporters at it as compose does; off, they export nothing.
	Traces bool
	// TracesUI is a jaeger-ui build for Jaeger to serve (empty: the
	// binary's own page, a placeholder in a build from the Go module).
	TracesUI string
	// Env holds more variables for the api, the worker and admin; they
	// override the rest (appEnv: compose's settings on loopback, with a
	// fresh WEBHOOK_SECRET_KEY and WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).
	Env []string
}

// Stack is the whole service as separate processes on loopback.
type Stack struct {
	Dir    string // the run folder: logs, PostgreSQL and Temporal data
	Bin    string
	PGDir  string
	PGPort int
	PG     *devpg.Cluster // the application's database
	DBURL  string
	// TemporalPG is Temporal's own cluster (TemporalServer only).
	TemporalPG *devpg.Cluster
	Temporal   *Proc
	TAddr      string
	// TemporalMetricsAddr serves the server's /metrics (TemporalServer
	// only; devtemporal has none).
	TemporalMetricsAddr string
	Namespace           string
	TaskQueue           string // TEMPORAL_TASK_QUEUE
	APIs                []*Proc
	APIAddrs            []string
	Workers             []*Proc
	WorkerAddrs         []string
	API                 *Proc // APIs[0]
	APIAddr             string
	Worker              *Proc // Workers[0]
	WorkerAddr          string
	DB                  *bun.DB       // the harness's own connection
	TC                  client.Client // for workflow histories
	// Jaeger is the trace backend (Options.Traces); JaegerAddr serves its
	// UI (the real one when JaegerUI) and query API; OTLPAddr is its OTLP
	// gRPC receiver.
	Jaeger     *Proc
	JaegerAddr string
	JaegerUI   bool
	OTLPAddr   string

	shutdownTimeout time.Duration
	adminEnv        []string
	pgSettings      []string // Options.PGSettings
}

// Start starts PostgreSQL, Temporal, the migrations, the APIs and the
// workers. On error the returned stack (when not nil) holds what did
// start: Stop it.
func Start(ctx context.Context, o Options) (*Stack, error) {
	o.APIs, o.Workers = max(o.APIs, 1), max(o.Workers, 1)
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 30 * time.Second
	}
	if o.Deploy == "" {
		root, err := ModuleRoot()
		if err != nil {
			return nil, err
		}
		o.Deploy = filepath.Join(root, "deploy")
	}
	s := &Stack{Dir: o.Dir, Bin: o.Bin, PGDir: filepath.Join(o.Dir, appPGDir),
		Namespace: appDefaults["TEMPORAL_NAMESPACE"], TaskQueue: cmp.Or(o.TaskQueue, appDefaults["TEMPORAL_TASK_QUEUE"]),
		shutdownTimeout: o.ShutdownTimeout, pgSettings: o.PGSettings}
	var err error
	if s.PGPort, err = freeport.Loopback(); err != nil {
		return nil, err
	}
	if err := s.StartPostgres(ctx); err != nil {
		return nil, err
	}
	password := randomHex(24) // like deploy/env.example's openssl rand -hex 24
	if err := ensureRole(ctx, s.PG, appDBUser, password); err != nil {
		return s, err
	}
	if err := ensureDatabase(ctx, s.PG, appDBName, appDBUser); err != nil {
		return s, err
	}
	s.DBURL = appDatabaseURL(s.PGPort, password)

	if o.TemporalServer {
		err = s.startTemporalServer(ctx, o, randomHex(24))
	} else {
		err = s.startDevTemporal(ctx, o)
	}
	if err != nil {
		return s, err
	}
	if s.TC, err = client.DialContext(ctx, client.Options{HostPort: s.TAddr, Namespace: s.Namespace, Logger: quietLogger()}); err != nil {
		return s, err
	}
	if o.TemporalServer {
		// Every worker registers them too, as it starts; doing it first
		// means no workflow starts before the frontend knows them.
		if err := searchattr.Ensure(ctx, s.TC, s.Namespace); err != nil {
			return s, err
		}
		names := slices.Sorted(maps.Keys(searchattr.Types()))
		if err := waitSearchAttributes(ctx, s.TC, s.Namespace, names); err != nil {
			return s, err
		}
	}

	if o.Traces {
		if err := s.startJaeger(ctx, o); err != nil {
			return s, err
		}
	}

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	secretKey := base64.StdEncoding.EncodeToString(key)
	addrs := func(api, worker string) appAddrs {
		return appAddrs{DatabaseURL: s.DBURL, HTTP: api, WorkerHTTP: worker, Temporal: s.TAddr, SecretKey: secretKey, OTLP: s.OTLPAddr}
	}
	// The migration runs as compose's migrate service does: the same
	// environment as the api and the worker (the first ones' addresses).
	ports := make([]string, o.APIs+o.Workers)
	for i := range ports {
		p, err := freeport.Loopback()
		if err != nil {
			return s, err
		}
		ports[i] = hostPort(p)
	}
	s.APIAddrs, s.WorkerAddrs = ports[:o.APIs], ports[o.APIs:]
	s.adminEnv = appEnv(addrs(s.APIAddrs[0], s.WorkerAddrs[0]), o)
	if _, err := s.Admin(ctx, "migrate"); err != nil {
		return s, err
	}
	for i, addr := range s.APIAddrs {
		// Each api's WORKER_HTTP_ADDR is unused; the first worker's keeps
		// the variable's shape.
		s.APIs = append(s.APIs, &Proc{Name: numbered("api", i, o.APIs), Bin: filepath.Join(o.Bin, "api"),
			Env: appEnv(addrs(addr, s.WorkerAddrs[0]), o), Ready: `"api listening"`})
	}
	for i, addr := range s.WorkerAddrs {
		s.Workers = append(s.Workers, &Proc{Name: numbered("worker", i, o.Workers), Bin: filepath.Join(o.Bin, "worker"),
			Env: appEnv(addrs(s.APIAddrs[0], addr), o), Ready: `"worker started"`})
	}
	for _, p := range append(slices.Clone(s.APIs), s.Workers...) {
		p.LogPath = filepath.Join(o.Dir, p.Name+".log")
		if o.Debug {
			port, err := freeport.Loopback()
			if err != nil {
				return s, err
			}
			p.DebugAddr = hostPort(port)
			p.Env = append(p.Env, "DEBUG_ADDR="+p.DebugAddr)
		}
		if err := p.Start(ctx, time.Minute); err != nil {
			return s, err
		}
	}
	s.API, s.APIAddr = s.APIs[0], s.APIAddrs[0]
	s.Worker, s.WorkerAddr = s.Workers[0], s.WorkerAddrs[0]

	s.DB, err = store.Open(s.DBURL, 0)
	return s, err
}

// startDevTemporal runs devtemporal (the embedded server on a SQLite file).
func (s *Stack) startDevTemporal(ctx context.Context, o Options) error {
	tPort, err := freeport.Loopback()
	if err != nil {
		return err
	}
	s.TAddr = hostPort(tPort)
	s.Temporal = &Proc{
		Name: "temporal", Bin: filepath.Join(o.Bin, "devtemporal"), LogPath: filepath.Join(o.Dir, "temporal.log"),
		Args: []string{"--port", strconv.Itoa(tPort), "--db-file", filepath.Join(o.Dir, "temporal.db"),
			"--namespace", s.Namespace, "--log-file", filepath.Join(o.Dir, "temporal-server.log")},
		Ready: "temporal ready",
	}
	return s.Temporal.Start(ctx, 2*time.Minute)
}

// numbered names the i-th of n processes: "api" alone, "api-1" of several.
func numbered(name string, i, n int) string {
	if n == 1 {
		return name
	}
	return name + "-" + strconv.Itoa(i+1)
}

// Stop ends everything the stack started, in reverse order: the workers,
// the APIs (each group at once, flushing their spans), Jaeger and
// Temporal, then the clusters.
func (s *Stack) Stop() {
	if s.TC != nil {
		s.TC.Close()
	}
	if s.DB != nil {
		s.DB.Close()
	}
	for _, group := range [][]*Proc{s.Workers, s.APIs, {s.Jaeger, s.Temporal}} {
		var wg sync.WaitGroup
		for _, p := range group {
			if p == nil || p.PID() == 0 {
				continue
			}
			wg.Go(func() {
				if _, err := p.Terminate(s.shutdownTimeout + 5*time.Second); err != nil {
					fmt.Fprintln(os.Stderr, "procstack:", err)
				}
			})
		}
		wg.Wait()
	}
	for _, pg := range []*devpg.Cluster{s.TemporalPG, s.PG} {
		if pg != nil {
			if err := pg.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "procstack:", err)
			}
		}
	}
}

// StartPostgres starts (or restarts, on the same data and port) the cluster.
func (s *Stack) StartPostgres(ctx context.Context) error {
	pg, err := startCluster(ctx, s.PGDir, s.PGPort, filepath.Join(s.Dir, "postgres.log"), append(slices.Clone(appPGSettings), s.pgSettings...))
	if err != nil {
		return err
	}
	s.PG = pg
	return nil
}

// StopPostgres shuts the cluster down (fast mode: sessions are cut).
func (s *Stack) StopPostgres() error { return s.PG.Stop() }

// PostgresUsage sums the cluster's processes: the postmaster, its backends
// and auxiliary processes, and the backends that already exited.
func (s *Stack) PostgresUsage() (Usage, error) {
	pid, err := PostmasterPID(s.PG.Dir)
	if err != nil {
		return Usage{}, err
	}
	return TreeUsage(pid)
}

// Workspace is what admin bootstrap prints.
type Workspace struct {
	WorkspaceID string `json:"workspaceId"`
	UserID      string `json:"userId"`
	Secret      string `json:"secret"`
}

// Bootstrap creates a workspace with an admin key through the admin binary.
func (s *Stack) Bootstrap(ctx context.Context, name string) (Workspace, error) {
	var ws Workspace
	out, err := s.Admin(ctx, "bootstrap", "--workspace-name", name, "--email", name+"@procstack.test")
	if err != nil {
		return ws, err
	}
	return ws, json.Unmarshal(out, &ws)
}

// Admin runs the admin binary against the stack's database and returns
// its standard output.
func (s *Stack) Admin(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.Bin, "admin"), args...)
	cmd.Env = append(os.Environ(), s.adminEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("admin %s: %w: %s", args[0], err, stderr.String())
	}
	return out, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

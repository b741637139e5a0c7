package procstack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/openlayer-ai/workspace-service/internal/devpg"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Binaries are the commands BuildBinaries builds and Start runs.
var Binaries = []string{"api", "worker", "admin", "devtemporal"}

// BuildBinaries builds the api, worker, admin and devtemporal commands into
// dir; go build relinks only what changed, so a kept dir makes later runs
// quick.
func BuildBinaries(dir string) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("find the module root: %w", err)
	}
	args := []string{"build", "-o", dir + string(os.PathSeparator)}
	for _, b := range Binaries {
		args = append(args, "./cmd/"+b)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = strings.TrimSpace(string(root))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// Options configure Start.
type Options struct {
	// Dir receives the logs and the PostgreSQL and Temporal data. The
	// PostgreSQL server user must be able to traverse it.
	Dir string
	// Bin holds the binaries BuildBinaries built.
	Bin string
	// CertFile is a PEM the worker trusts for webhook receivers
	// (SSL_CERT_FILE); empty: the system pool only.
	CertFile string
	// TaskQueue is TEMPORAL_TASK_QUEUE (default "procstack").
	TaskQueue string
	// RetrySchedule is WEBHOOK_RETRY_SCHEDULE; empty keeps the service's default.
	RetrySchedule string
	// ShutdownTimeout is SHUTDOWN_TIMEOUT (default 30s); Stop waits that
	// long, plus 5 s, for each process.
	ShutdownTimeout time.Duration
	// Env holds more variables for the api and the worker; they override
	// the defaults above (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, a fresh
	// WEBHOOK_SECRET_KEY, LOG_LEVEL=info, DELIVERY_RETENTION=2160h).
	Env []string
}

// Stack is the whole service as separate processes on loopback.
type Stack struct {
	Dir        string // the run folder: logs, PostgreSQL and Temporal data
	Bin        string
	PGDir      string
	PGPort     int
	PG         *devpg.Cluster
	DBURL      string
	Temporal   *Proc
	TAddr      string
	API        *Proc
	APIAddr    string
	Worker     *Proc
	WorkerAddr string
	DB         *bun.DB       // the harness's own connection
	TC         client.Client // for workflow histories

	shutdownTimeout time.Duration
}

// Start starts PostgreSQL, Temporal, the migrations, the API and the
// worker. On error the returned stack (when not nil) holds what did start:
// Stop it.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.TaskQueue == "" {
		o.TaskQueue = "procstack"
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 30 * time.Second
	}
	s := &Stack{Dir: o.Dir, Bin: o.Bin, PGDir: filepath.Join(o.Dir, "postgres"), shutdownTimeout: o.ShutdownTimeout}
	var err error
	if s.PGPort, err = FreePort(); err != nil {
		return nil, err
	}
	if err := s.StartPostgres(ctx); err != nil {
		return nil, err
	}
	if err := devpg.EnsureDatabase(ctx, s.PG.URL("postgres"), "workspace"); err != nil {
		return s, err
	}
	s.DBURL = s.PG.URL("workspace")

	tPort, err := FreePort()
	if err != nil {
		return s, err
	}
	s.TAddr = "127.0.0.1:" + strconv.Itoa(tPort)
	s.Temporal = &Proc{
		Name: "temporal", Bin: filepath.Join(o.Bin, "devtemporal"), LogPath: filepath.Join(o.Dir, "temporal.log"),
		Args: []string{"--port", strconv.Itoa(tPort), "--db-file", filepath.Join(o.Dir, "temporal.db"),
			"--log-file", filepath.Join(o.Dir, "temporal-server.log")},
		Ready: "temporal ready",
	}
	if err := s.Temporal.Start(2 * time.Minute); err != nil {
		return s, err
	}

	if _, err := s.Admin(ctx, "migrate"); err != nil {
		return s, err
	}
	apiPort, err := FreePort()
	if err != nil {
		return s, err
	}
	workerPort, err := FreePort()
	if err != nil {
		return s, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s.APIAddr = "127.0.0.1:" + strconv.Itoa(apiPort)
	s.WorkerAddr = "127.0.0.1:" + strconv.Itoa(workerPort)
	env := []string{
		"DATABASE_URL=" + s.DBURL,
		"HTTP_ADDR=" + s.APIAddr,
		"WORKER_HTTP_ADDR=" + s.WorkerAddr,
		"TEMPORAL_ADDRESS=" + s.TAddr,
		"TEMPORAL_NAMESPACE=default",
		"TEMPORAL_TASK_QUEUE=" + o.TaskQueue,
		"WEBHOOK_SECRET_KEY=" + base64.StdEncoding.EncodeToString(key),
		"WEBHOOK_ALLOW_PRIVATE_NETWORKS=true",
		"SHUTDOWN_TIMEOUT=" + o.ShutdownTimeout.String(),
		"DELIVERY_RETENTION=2160h",
		"LOG_LEVEL=info",
	}
	if o.RetrySchedule != "" {
		env = append(env, "WEBHOOK_RETRY_SCHEDULE="+o.RetrySchedule)
	}
	if o.CertFile != "" {
		env = append(env, "SSL_CERT_FILE="+o.CertFile)
	}
	env = append(env, o.Env...) // exec keeps the last of duplicate keys
	s.API = &Proc{Name: "api", Bin: filepath.Join(o.Bin, "api"), Env: env,
		LogPath: filepath.Join(o.Dir, "api.log"), Ready: `"api listening"`}
	s.Worker = &Proc{Name: "worker", Bin: filepath.Join(o.Bin, "worker"), Env: env,
		LogPath: filepath.Join(o.Dir, "worker.log"), Ready: `"worker started"`}
	if err := s.API.Start(time.Minute); err != nil {
		return s, err
	}
	if err := s.Worker.Start(time.Minute); err != nil {
		return s, err
	}

	if s.DB, err = store.Open(s.DBURL); err != nil {
		return s, err
	}
	s.TC, err = client.Dial(client.Options{
		HostPort: s.TAddr, Namespace: "default",
		Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	return s, err
}

// Stop ends everything the stack started, in reverse order.
func (s *Stack) Stop() {
	if s.TC != nil {
		s.TC.Close()
	}
	if s.DB != nil {
		s.DB.Close()
	}
	for _, p := range []*Proc{s.Worker, s.API, s.Temporal} {
		if p != nil && p.PID() != 0 {
			if _, err := p.Terminate(s.shutdownTimeout + 5*time.Second); err != nil {
				fmt.Fprintln(os.Stderr, "procstack:", err)
			}
		}
	}
	if s.PG != nil {
		_ = s.PG.Stop()
	}
}

// StartPostgres starts (or restarts, on the same data and port) the cluster.
func (s *Stack) StartPostgres(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pg, err := devpg.Start(ctx, devpg.Options{Dir: s.PGDir, Port: s.PGPort, Fast: true,
		LogFile: filepath.Join(s.Dir, "postgres.log")})
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
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
	cmd.Env = append(os.Environ(), "DATABASE_URL="+s.DBURL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("admin %s: %w: %s", args[0], err, stderr.String())
	}
	return out, nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

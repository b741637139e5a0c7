package reliability

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

// retrySchedule is WEBHOOK_RETRY_SCHEDULE for every scenario: short, so a
// failing endpoint reaches its final attempt within a second.
const retrySchedule = "200ms,200ms,200ms"

// attemptsPerSchedule is how many attempts retrySchedule makes in all.
const attemptsPerSchedule = 4

// shutdownTimeout is SHUTDOWN_TIMEOUT: long enough for a 5-second attempt
// to finish when the worker is asked to stop.
const shutdownTimeout = 30 * time.Second

// stack is the whole service as separate processes on loopback.
type stack struct {
	dir      string // the run folder: logs, PostgreSQL and Temporal data
	bin      string
	pgDir    string
	pgPort   int
	pg       *devpg.Cluster
	dbURL    string
	temporal *proc
	tAddr    string
	api      *proc
	apiAddr  string
	worker   *proc
	db       *bun.DB       // the checker's own connection
	tc       client.Client // for workflow histories
}

// buildBinaries builds the four commands into dir once; go build relinks
// only what changed, so a kept RELIABILITY_BIN makes later runs quick.
func buildBinaries(dir string) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("find the module root: %w", err)
	}
	cmd := exec.Command("go", "build", "-o", dir+string(os.PathSeparator),
		"./cmd/api", "./cmd/worker", "./cmd/admin", "./cmd/devtemporal")
	cmd.Dir = strings.TrimSpace(string(root))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// startStack starts PostgreSQL, Temporal, the migrations, the API and the
// worker. certFile is the PEM the worker trusts for receivers.
func startStack(ctx context.Context, dir, bin, certFile string) (*stack, error) {
	s := &stack{dir: dir, bin: bin, pgDir: filepath.Join(dir, "postgres")}
	var err error
	if s.pgPort, err = freePort(); err != nil {
		return nil, err
	}
	if err := s.startPostgres(ctx); err != nil {
		return nil, err
	}
	if err := devpg.EnsureDatabase(ctx, s.pg.URL("postgres"), "workspace"); err != nil {
		return s, err
	}
	s.dbURL = s.pg.URL("workspace")

	tPort, err := freePort()
	if err != nil {
		return s, err
	}
	s.tAddr = "127.0.0.1:" + strconv.Itoa(tPort)
	s.temporal = &proc{
		name: "temporal", bin: filepath.Join(bin, "devtemporal"), logPath: filepath.Join(dir, "temporal.log"),
		args: []string{"--port", strconv.Itoa(tPort), "--db-file", filepath.Join(dir, "temporal.db"),
			"--log-file", filepath.Join(dir, "temporal-server.log")},
		ready: "temporal ready",
	}
	if err := s.temporal.start(2 * time.Minute); err != nil {
		return s, err
	}

	if _, err := s.admin(ctx, "migrate"); err != nil {
		return s, err
	}
	apiPort, err := freePort()
	if err != nil {
		return s, err
	}
	workerPort, err := freePort()
	if err != nil {
		return s, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s.apiAddr = "127.0.0.1:" + strconv.Itoa(apiPort)
	env := []string{
		"DATABASE_URL=" + s.dbURL,
		"HTTP_ADDR=" + s.apiAddr,
		"WORKER_HTTP_ADDR=127.0.0.1:" + strconv.Itoa(workerPort),
		"TEMPORAL_ADDRESS=" + s.tAddr,
		"TEMPORAL_NAMESPACE=default",
		"TEMPORAL_TASK_QUEUE=reliability",
		"WEBHOOK_SECRET_KEY=" + base64.StdEncoding.EncodeToString(key),
		"WEBHOOK_RETRY_SCHEDULE=" + retrySchedule,
		"WEBHOOK_ALLOW_PRIVATE_NETWORKS=true",
		"SHUTDOWN_TIMEOUT=" + shutdownTimeout.String(),
		"DELIVERY_RETENTION=2160h",
		"LOG_LEVEL=info",
		"SSL_CERT_FILE=" + certFile,
	}
	s.api = &proc{name: "api", bin: filepath.Join(bin, "api"), env: env,
		logPath: filepath.Join(dir, "api.log"), ready: `"api listening"`}
	s.worker = &proc{name: "worker", bin: filepath.Join(bin, "worker"), env: env,
		logPath: filepath.Join(dir, "worker.log"), ready: `"worker started"`}
	if err := s.api.start(time.Minute); err != nil {
		return s, err
	}
	if err := s.worker.start(time.Minute); err != nil {
		return s, err
	}

	if s.db, err = store.Open(s.dbURL); err != nil {
		return s, err
	}
	s.tc, err = client.Dial(client.Options{
		HostPort: s.tAddr, Namespace: "default",
		Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	return s, err
}

// stop ends everything the stack started, in reverse order.
func (s *stack) stop() {
	if s.tc != nil {
		s.tc.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	for _, p := range []*proc{s.worker, s.api, s.temporal} {
		if p != nil && p.pid() != 0 {
			if _, err := p.terminate(shutdownTimeout + 5*time.Second); err != nil {
				fmt.Fprintln(os.Stderr, "reliability:", err)
			}
		}
	}
	if s.pg != nil {
		_ = s.pg.Stop()
	}
}

// startPostgres starts (or restarts, on the same data and port) the cluster.
func (s *stack) startPostgres(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pg, err := devpg.Start(ctx, devpg.Options{Dir: s.pgDir, Port: s.pgPort, Fast: true,
		LogFile: filepath.Join(s.dir, "postgres.log")})
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.pg = pg
	return nil
}

// stopPostgres shuts the cluster down (fast mode: sessions are cut).
func (s *stack) stopPostgres() error { return s.pg.Stop() }

// workspace is what admin bootstrap prints.
type workspace struct {
	WorkspaceID string `json:"workspaceId"`
	Secret      string `json:"secret"`
}

// bootstrap creates a workspace with an admin key through the admin binary.
func (s *stack) bootstrap(ctx context.Context, name string) (workspace, error) {
	var ws workspace
	out, err := s.admin(ctx, "bootstrap", "--workspace-name", name, "--email", name+"@reliability.test")
	if err != nil {
		return ws, err
	}
	return ws, json.Unmarshal(out, &ws)
}

func (s *stack) admin(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "admin"), args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+s.dbURL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("admin %s: %w: %s", args[0], err, stderr.String())
	}
	return out, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/openlayer-ai/workspace-service/app"
	"github.com/openlayer-ai/workspace-service/harness/devpg"
	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/harness/procstack"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/migrations"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// credentials is what credentials.json holds.
type credentials struct {
	BaseURL     string `json:"baseUrl"`
	WorkspaceID string `json:"workspaceId"`
	APIKey      string `json:"apiKey"`
	DatabaseURL string `json:"databaseUrl"`
}

func run(ctx context.Context, o options) error {
	dataDir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return err
	}
	// 0755: the PostgreSQL server runs as its own user and must reach its folder inside.
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	if o.portOffset > 0 {
		why := "moved by --port-offset"
		if o.autoOffset {
			why = "a default port is taken (another make dev?): moved"
		}
		pg := ""
		if os.Getenv("DATABASE_URL") == "" {
			pg = fmt.Sprintf(", PostgreSQL %d", o.pgPort)
		}
		fmt.Printf("ports %s by %d where no flag set them: API %s, worker %s, Temporal %d, Web UI %d%s; data in %s\n",
			why, o.portOffset, o.httpAddr, o.workerAddr, o.temporalPort, o.uiPort, pg, dataDir)
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg.LogLevel)

	if cfg.DatabaseURL == "" {
		fmt.Println("starting PostgreSQL under", filepath.Join(dataDir, "postgres"))
		pg, err := devpg.Start(ctx, devpg.Options{Dir: filepath.Join(dataDir, "postgres"), Port: o.pgPort})
		if err != nil {
			return fmt.Errorf("start postgres: %w", err)
		}
		defer pg.Stop() //nolint:errcheck // best effort on the way out
		if err := devpg.EnsureDatabase(ctx, pg.URL("postgres"), "workspace"); err != nil {
			return err
		}
		cfg.DatabaseURL = pg.URL("workspace")
	}
	if err := migrate(ctx, cfg.DatabaseURL); err != nil {
		return err
	}

	fmt.Println("starting Temporal on port", o.temporalPort)
	ts, err := devtemporal.Start(devtemporal.Options{
		Port:         o.temporalPort,
		UIPort:       o.uiPort,
		DatabaseFile: filepath.Join(dataDir, "temporal.db"),
		Namespace:    cfg.TemporalNamespace,
		LogFile:      filepath.Join(dataDir, "temporal.log"),
	})
	if err != nil {
		return err
	}
	defer ts.Stop()
	cfg.TemporalAddress = ts.Addr()
	cfg.HTTPAddr = o.httpAddr
	cfg.WorkerHTTPAddr = o.workerAddr
	// Local receivers (localhost, LAN) are the point of a dev setup.
	cfg.WebhookAllowPrivateNetworks = true
	if len(cfg.WebhookSecretKeys) == 0 {
		key, err := devSecretKey(filepath.Join(dataDir, "webhook-secret.key"))
		if err != nil {
			return err
		}
		cfg.WebhookSecretKeys = [][]byte{key}
	}

	jaegerLine := ""
	if o.traces {
		j, err := startJaeger(ctx, o, dataDir)
		if err != nil {
			return err
		}
		defer j.Terminate(5 * time.Second) //nolint:errcheck // best effort on the way out
		jaegerLine = fmt.Sprintf("  Jaeger         http://%[1]s (its query API; the page is a placeholder in a build from the Go module)\n"+
			"  event's trace  http://%[1]s/api/traces?service=workspace-dev&tag=event.id:<eventId>\n", j.Addr)
	}
	// OTEL_EXPORTER_OTLP_ENDPOINT traces the dev API and worker, one process.
	stopTracing, err := app.Tracing(ctx, "workspace-dev", cfg.ShutdownTimeout)
	if err != nil {
		return err
	}
	defer stopTracing()
	apiProc, err := app.NewAPI(cfg, log)
	if err != nil {
		return err
	}
	workerProc, err := app.NewWorker(cfg, log)
	if err != nil {
		return err
	}
	creds, err := ensureCredentials(ctx, filepath.Join(dataDir, "credentials.json"), "http://"+apiProc.Addr()+"/v1", cfg.DatabaseURL)
	if err != nil {
		return err
	}

	fmt.Printf(`
workspace-service is running (Ctrl-C stops everything)
  API            %[1]s
  API metrics    http://%[2]s/metrics
  worker metrics http://%[3]s/metrics
  Temporal       %[4]s (namespace %[5]q)
  Temporal UI    http://127.0.0.1:%[6]d (filter with Outcome = "exhausted", SubscriptionIds = "<id>", ApiKeyId = "<id>")
%[10]s  workspace      %[7]s
  admin API key  %[8]s
  credentials    %[9]s
  webhooks       WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: deliveries may target localhost and private networks

try: curl -H "Authorization: Bearer %[8]s" %[1]s/projects
portal link (for the people who receive the webhooks; opens once, for an hour):
     curl -X POST -H "Authorization: Bearer %[8]s" %[1]s/workspaces/%[7]s/portal-sessions

`, creds.BaseURL, apiProc.Addr(), workerProc.Addr(), ts.Addr(), cfg.TemporalNamespace, o.uiPort,
		creds.WorkspaceID, creds.APIKey, filepath.Join(dataDir, "credentials.json"), jaegerLine)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return apiProc.Run(gctx) })
	g.Go(func() error { return workerProc.Run(gctx) })
	err = g.Wait()
	log.Info("stopped", slog.Any("error", err))
	return err
}

// startJaeger builds Jaeger beside this binary (bin/jaeger; minutes the
// first time) and runs it on o's ports, its log in the data folder, with
// OTEL_EXPORTER_OTLP_ENDPOINT pointed at it unless one is set.
func startJaeger(ctx context.Context, o options, dataDir string) (*procstack.Jaeger, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	bin := filepath.Dir(self)
	fmt.Println("building Jaeger into", bin, "(the first build compiles the OpenTelemetry collector: minutes)")
	if err := procstack.BuildJaeger(ctx, bin); err != nil {
		return nil, err
	}
	root, err := procstack.ModuleRoot()
	if err != nil {
		return nil, err
	}
	addrs := map[string]string{}
	for name, port := range o.jaegerPorts {
		addrs[name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	}
	j, err := procstack.StartJaeger(ctx, procstack.JaegerOptions{
		Bin: bin, Dir: dataDir, Deploy: filepath.Join(root, "deploy"), Addrs: addrs,
	})
	if err != nil {
		return nil, err
	}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+j.OTLP)
	}
	return j, nil
}

func migrate(ctx context.Context, dsn string) error {
	db, err := store.Open(dsn, 0)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := migrations.Apply(ctx, db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// ensureCredentials bootstraps a workspace on first start and otherwise
// reuses the saved one, refreshing the addresses that may have changed.
func ensureCredentials(ctx context.Context, path, baseURL, dsn string) (credentials, error) {
	var c credentials
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &c); err != nil {
			return c, fmt.Errorf("%s is corrupt (delete it to bootstrap anew): %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		db, err := store.Open(dsn, 0)
		if err != nil {
			return c, err
		}
		defer db.Close()
		created, err := store.New(db).Bootstrap(ctx, "Local workspace", "admin@localhost")
		if err != nil {
			return c, fmt.Errorf("bootstrap: %w", err)
		}
		c.WorkspaceID, c.APIKey = created.WorkspaceID.String(), created.Secret
	default:
		return c, err
	}
	c.BaseURL, c.DatabaseURL = baseURL, dsn
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return c, err
	}
	return c, os.WriteFile(path, append(out, '\n'), 0o600)
}

// devSecretKey keeps the webhook encryption key beside the data it protects,
// so webhooks created in one dev session still deliver in the next.
func devSecretKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return base64.StdEncoding.DecodeString(string(b))
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return key, os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)), 0o600)
}

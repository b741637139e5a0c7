// Package devtemporal embeds a single-process Temporal server (SQLite
// persistence) and, optionally, the Temporal Web UI. It exists for the dev
// command and the end-to-end tests only: production runs a real Temporal
// cluster. It is the only package that imports go.temporal.io/server, which
// keeps that large dependency out of the api and worker binaries. The
// service's custom search attributes are registered in its namespace at
// start, as cmd/worker registers them on a real cluster.
package devtemporal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiopts "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	tlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/metrics"
	tsql "go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/common/resolver"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/openlayer-ai/workspace-service/harness/freeport"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

const host = "127.0.0.1"

// Options configures the embedded server.
type Options struct {
	// Port is the frontend gRPC port; 0 picks a free one.
	Port int
	// UIPort serves the Web UI when non-zero.
	UIPort int
	// DatabaseFile persists history in a SQLite file; empty keeps it in memory.
	DatabaseFile string
	// Namespace is created on start if missing.
	Namespace string
	// DurableSQLite keeps SQLite's default journal and sync settings:
	// nothing is lost on a power cut, at about a quarter of the speed.
	DurableSQLite bool
	// LogFile receives the server's own logs (warnings and above); empty discards them.
	LogFile string
	// SearchAttributeValueLimit is the largest search attribute value the
	// server accepts, in bytes (frontend.searchAttributesSizeOfValueLimit);
	// 0 means DefaultSearchAttributeValueLimit. Temporal's own default is
	// 2 KB; tests of a default cluster set that.
	SearchAttributeValueLimit int
	// WorkerCommands lets the server send commands to workers
	// (frontend.WorkerCommandsEnabled, off by default in Temporal 1.32; a
	// cluster or Temporal Cloud may turn it on), for tests of what SDK
	// clients then do.
	WorkerCommands bool
}

// DefaultSearchAttributeValueLimit lets SubscriptionIds list an event's
// recipients up to the fan-out cap (100 ids take 3.9 KB), as the compose
// file and make stack configure their servers.
const DefaultSearchAttributeValueLimit = 8 << 10

// Server is a running embedded Temporal server.
type Server struct {
	temporal temporal.Server
	ui       *uiserver.Server
	addr     string
}

// Start boots the server and returns once its frontend accepts connections.
func Start(o Options) (*Server, error) {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.SearchAttributeValueLimit == 0 {
		o.SearchAttributeValueLimit = DefaultSearchAttributeValueLimit
	}
	// Below the kernel's ephemeral range (32768 up): a port picked there
	// can become another test binary's outbound connection's local port
	// before the server binds it, and a service whose listener failed
	// crashes the server (CI: the worker service served a nil listener).
	picked, err := freeport.InRange(5, 10000, 32768)
	if err != nil {
		return nil, err
	}
	if o.Port == 0 {
		o.Port = picked[4]
	}
	ports := map[string]int{"frontend": o.Port}
	for i, svc := range []string{"history", "matching", "worker", "frontendHTTP"} {
		ports[svc] = picked[i]
	}
	sqlConf, err := sqlConfig(o)
	if err != nil {
		return nil, err
	}
	conf := serverConfig(ports, sqlConf)

	var logger tlog.Logger = tlog.NewNoopLogger()
	if o.LogFile != "" {
		logger = tlog.NewZapLogger(tlog.BuildZapLogger(tlog.Config{Level: "warn", OutputFile: o.LogFile}))
	}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for svc, name := range map[string]primitives.ServiceName{
		"frontend": primitives.FrontendService, "history": primitives.HistoryService,
		"matching": primitives.MatchingService, "worker": primitives.WorkerService,
	} {
		hosts[name] = static.SingleLocalHost(net.JoinHostPort(host, strconv.Itoa(ports[svc])))
	}
	dyn := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		dynamicconfig.SearchAttributesSizeOfValueLimit.Key():             o.SearchAttributeValueLimit,
		dynamicconfig.WorkerCommandsEnabled.Key():                        o.WorkerCommands,
		// Priority keys first, then workspaces in turn (workflows.Priority*).
		// Tasks go to one partition, so that order is exact rather than per
		// partition; polls still read all four (the default), so tasks an
		// earlier run left in the others are served (deploy's dynamic config).
		dynamicconfig.MatchingEnableFairness.Key():              true,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("build temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	s := &Server{temporal: srv, addr: net.JoinHostPort(host, strconv.Itoa(o.Port))}
	if err := s.ensureSearchAttributes(o.Namespace); err != nil {
		s.Stop()
		return nil, err
	}
	if o.UIPort != 0 {
		s.ui = uiserver.NewServer(uiopts.WithConfigProvider(&uiconfig.Config{
			Host:                host,
			Port:                o.UIPort,
			TemporalGRPCAddress: s.addr,
			EnableUI:            true,
			CORS:                uiconfig.CORS{CookieInsecure: true},
			HideLogs:            true,
			DisableNewsFetch:    true,
		}))
		// The UI's Start blocks; a failure there must not take the service down.
		go func() { _ = s.ui.Start() }()
	}
	return s, nil
}

// ensureSearchAttributes registers the service's search attributes in a
// namespace that lacks them. A namespace this package creates has them
// from the start (sqlConfig); one in a database file from an earlier
// release gets them here, and the server's namespace cache may then take
// up to its refresh interval (10 s) to accept them in a start, which the
// outbox relay's retries absorb.
func (s *Server) ensureSearchAttributes(namespace string) error {
	c, err := client.Dial(client.Options{HostPort: s.addr, Namespace: namespace, Logger: quietSDK})
	if err != nil {
		return fmt.Errorf("dial embedded temporal: %w", err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := searchattr.Ensure(ctx, c, namespace); err != nil {
		return fmt.Errorf("register search attributes: %w", err)
	}
	return nil
}

// quietSDK keeps the registration client's lines out of the dev output.
var quietSDK = sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))

// Addr is the frontend host:port for SDK clients.
func (s *Server) Addr() string { return s.addr }

// Stop shuts the UI and the server down.
func (s *Server) Stop() {
	if s.ui != nil {
		s.ui.Stop()
	}
	_ = s.temporal.Stop()
}

func serverConfig(ports map[string]int, sqlConf *config.SQL) *config.Config {
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = host
	conf.Persistence.DefaultStore = "sqlite"
	conf.Persistence.VisibilityStore = "sqlite"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlConf}}
	frontend := net.JoinHostPort(host, strconv.Itoa(ports["frontend"]))
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        "active",
		CurrentClusterName:       "active",
		ClusterInformation: map[string]cluster.ClusterInformation{
			"active": {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
				HTTPAddress:            net.JoinHostPort(host, strconv.Itoa(ports["frontendHTTP"])),
				ClusterID:              "workspace-service-dev",
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{}
	for _, svc := range []string{"frontend", "history", "matching", "worker"} {
		var sc config.Service
		sc.RPC.GRPCPort = ports[svc]
		sc.RPC.BindOnIP = host
		if svc == "frontend" {
			sc.RPC.HTTPPort = ports["frontendHTTP"]
		}
		conf.Services[svc] = sc
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend
	return &conf
}

// sqlConfig prepares the SQLite store. WAL with synchronous=off makes the
// embedded server several times faster; the price is that a power cut may
// lose the last moments of history, acceptable for a dev server.
func sqlConfig(o Options) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if o.DatabaseFile == "" {
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		conf.DatabaseName = "temporal-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	} else {
		conf.ConnectAttributes = map[string]string{"mode": "rwc"}
		if !o.DurableSQLite {
			conf.ConnectAttributes["journal_mode"] = "wal"
			conf.ConnectAttributes["synchronous"] = "off"
		}
		conf.DatabaseName = o.DatabaseFile
		if _, err := os.Stat(o.DatabaseFile); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(filepath.Dir(o.DatabaseFile), 0o700); err != nil {
				return nil, err
			}
			if err := sqliteschema.SetupSchema(conf); err != nil {
				return nil, fmt.Errorf("set up temporal sqlite schema: %w", err)
			}
		}
	}
	if o.DatabaseFile != "" {
		if err := trimVisibilityIndexes(conf); err != nil {
			return nil, err
		}
	}
	// The search attributes come with the namespace, so a fresh server
	// accepts them in its first start, without waiting for its namespace
	// cache to see an added one.
	ns, err := sqliteschema.NewNamespaceConfig("active", o.Namespace, false, searchattr.Types())
	if err != nil {
		return nil, err
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("create temporal namespace: %w", err)
	}
	return conf, nil
}

// unusedVisibilityIndexes are indexes of Temporal's SQLite visibility
// table that no list this service or its operators run can use: numeric
// and history-size sorts, parent and root runs, deployments, batches, and
// the predefined Bool/Datetime/Double/Int and internal Temporal* search
// attribute columns. Every workflow's start and close rewrites its
// visibility row, and with 58 indexes that was half of the embedded
// server's CPU (profiled under make bench); each index dropped is a b-tree
// the row no longer updates twice. Lists by namespace, time, workflow id,
// type, status, task queue, schedule and the Keyword attributes (our
// custom search attributes) keep their indexes; any other filter still
// works, by scanning, which is fine at a dev server's size. Dropping is
// idempotent and changes no data, so it runs on every start.
var unusedVisibilityIndexes = []string{
	"by_history_length", "by_history_size_bytes", "by_execution_duration", "by_state_transition_count",
	"by_parent_workflow_id", "by_parent_run_id", "by_root_workflow_id", "by_root_run_id",
	"by_batcher_user", "by_temporal_scheduled_start_time", "by_temporal_schedule_paused",
	"by_temporal_namespace_division", "by_temporal_pause_info", "by_temporal_worker_deployment_version",
	"by_temporal_workflow_versioning_behavior", "by_temporal_worker_deployment",
	"by_bool_01", "by_bool_02", "by_bool_03", "by_datetime_01", "by_datetime_02", "by_datetime_03",
	"by_double_01", "by_double_02", "by_double_03", "by_int_01", "by_int_02", "by_int_03",
	"by_temporal_bool_01", "by_temporal_bool_02", "by_temporal_datetime_01", "by_temporal_datetime_02",
	"by_temporal_double_01", "by_temporal_double_02", "by_temporal_int_01", "by_temporal_int_02",
	"by_temporal_keyword_01", "by_temporal_keyword_02", "by_temporal_keyword_03", "by_temporal_keyword_04",
	"by_temporal_low_cardinality_keyword_01",
}

// trimVisibilityIndexes drops unusedVisibilityIndexes from the file.
func trimVisibilityIndexes(conf *config.SQL) error {
	db, err := tsql.NewSQLAdminDB(sqlplugin.DbKindUnknown, conf, resolver.NewNoopResolver(), tlog.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("open temporal sqlite: %w", err)
	}
	defer func() { _ = db.Close() }()
	for _, name := range unusedVisibilityIndexes {
		if err := db.Exec("DROP INDEX IF EXISTS " + name); err != nil {
			return fmt.Errorf("drop visibility index %s: %w", name, err)
		}
	}
	return nil
}

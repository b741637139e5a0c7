package procstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/openlayer-ai/workspace-service/harness/devpg"
	"github.com/openlayer-ai/workspace-service/harness/freeport"
)

// namespaceRetention is how long Temporal keeps closed histories: the
// NAMESPACE_RETENTION compose's temporal-namespace service registers.
const namespaceRetention = 72 * time.Hour

// startTemporalServer runs the production Temporal: its own PostgreSQL
// cluster (compose's temporal-postgres), the schema applied by
// deploy/temporal/setup-schema.sh with Temporal's SQL tool (compose's
// temporal-schema), the server built from the module proxy (compose's
// temporal), and the namespace registered (compose's temporal-namespace).
func (s *Stack) startTemporalServer(ctx context.Context, o Options, password string) error {
	port, err := freeport.Loopback()
	if err != nil {
		return err
	}
	s.TemporalPG, err = startCluster(ctx, filepath.Join(s.Dir, temporalPGDir), port, filepath.Join(s.Dir, temporalPGDir+".log"), temporalPGSettings)
	if err != nil {
		return err
	}
	if err := ensureRole(ctx, s.TemporalPG, temporalDBUser, password); err != nil {
		return err
	}

	script := filepath.Join(o.Deploy, "temporal", "setup-schema.sh")
	cmd := exec.CommandContext(ctx, "/bin/sh", script)
	cmd.Env = append(os.Environ(), schemaEnv(s.TemporalPG.Port, password, o.Bin+string(os.PathListSeparator)+os.Getenv("PATH"))...)
	// When ctx ends (Ctrl-C), the SQL tool the script runs ends with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	logFile, err := os.Create(filepath.Join(s.Dir, "temporal-schema.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	err = cmd.Run()
	logFile.Close()
	if err != nil {
		return fmt.Errorf("%s: %w; see %s", script, err, logFile.Name())
	}

	t := temporalServer{
		PGPort: s.TemporalPG.Port, Password: password,
		DynamicConfig: filepath.Join(o.Deploy, "temporal", "dynamicconfig.yaml"),
		Ports:         map[string]int{},
	}
	// Below 32768: the server records its membership ports in a smallint
	// column (cluster_membership.rpc_port), and the kernel's ephemeral
	// ports (freeport.Loopback's) are mostly above that.
	low, err := freeport.InRange(len(temporalPorts), 10000, 32768)
	if err != nil {
		return err
	}
	for i, name := range temporalPorts {
		t.Ports[name] = low[i]
	}
	metricsPort, err := freeport.Loopback()
	if err != nil {
		return err
	}
	t.MetricsAddr = hostPort(metricsPort)
	s.TAddr = hostPort(t.Ports["FRONTEND_GRPC_PORT"])
	s.TemporalMetricsAddr = t.MetricsAddr
	s.Temporal = &Proc{
		Name: "temporal", Bin: filepath.Join(o.Bin, "temporal-server"), Args: []string{"start"},
		Env: temporalServerEnv(t), LogPath: filepath.Join(s.Dir, "temporal.log"),
		ReadyCheck: func(ctx context.Context) error { return s.registerNamespace(ctx, s.Namespace) },
	}
	return s.Temporal.Start(ctx, 3*time.Minute)
}

// registerNamespace registers the namespace unless it exists (the SDK's
// idempotent equivalent of deploy/temporal/create-namespace.sh), then
// checks that the frontend serves it: a new namespace reaches the
// server's namespace cache within its refresh interval (10 s by default).
func (s *Stack) registerNamespace(ctx context.Context, namespace string) error {
	nc, err := client.NewNamespaceClient(client.Options{HostPort: s.TAddr, Logger: quietLogger()})
	if err != nil {
		return err
	}
	defer nc.Close()
	_, err = nc.Describe(ctx, namespace)
	var notFound *serviceerror.NamespaceNotFound
	if errors.As(err, &notFound) {
		err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(namespaceRetention),
		})
		var exists *serviceerror.NamespaceAlreadyExists
		if errors.As(err, &exists) {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	c, err := client.DialContext(ctx, client.Options{HostPort: s.TAddr, Namespace: namespace, Logger: quietLogger()})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace})
	return err
}

// waitSearchAttributes waits until the frontend accepts a list query on
// each of names: like a namespace, an attribute added through the
// operator service is seen once the namespace cache refreshes.
func waitSearchAttributes(ctx context.Context, c client.Client, namespace string, names []string) error {
	var terms []string
	for _, n := range names {
		terms = append(terms, n+` = "stack-probe"`)
	}
	query := strings.Join(terms, " OR ")
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		_, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: query})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("search attributes %s not queryable: %w", strings.Join(names, ", "), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// startCluster starts a throwaway PostgreSQL cluster with compose's
// settings for it.
func startCluster(ctx context.Context, dir string, port int, logFile string, settings []string) (*devpg.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pg, err := devpg.Start(ctx, devpg.Options{Dir: dir, Port: port, Fast: true, LogFile: logFile, Settings: settings})
	if err != nil {
		return nil, fmt.Errorf("start postgres in %s: %w", dir, err)
	}
	return pg, nil
}

func hostPort(port int) string { return host + ":" + strconv.Itoa(port) }

func quietLogger() tlog.Logger { return tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

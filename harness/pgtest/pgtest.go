// Package pgtest gives each test its own PostgreSQL database with the schema
// already applied. A test binary starts one throwaway cluster (devpg, in a
// temporary directory) on first use, migrates a template database once, and
// clones it per test with CREATE DATABASE ... TEMPLATE, which takes tens of
// milliseconds instead of re-running the migrations.
//
// When TEST_DATABASE_URL is set (an existing server whose user may create
// databases), that server is used instead of starting one.
//
// Packages using it should call Main from TestMain, which stops the cluster
// and removes its files when the tests end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/harness/devpg"
	"github.com/openlayer-ai/workspace-service/internal/migrations"
)

// server is the per-binary PostgreSQL server and its migrated template.
type server struct {
	baseURL  *url.URL // any database on the server; the path is replaced per database
	admin    *sql.DB  // for CREATE/DROP DATABASE
	template string

	cluster  *devpg.Cluster // nil with TEST_DATABASE_URL
	tmpDir   string
	watchdog io.Closer // closing it (or dying) lets the watchdog go
}

var (
	once   sync.Once
	srv    *server
	srvErr error
)

// Main runs the tests, then stops the cluster and removes its directory (or,
// with TEST_DATABASE_URL, drops the template database). Call it from
// TestMain; the test binary exits with m.Run's result.
func Main(m *testing.M) {
	m.Run()
	once.Do(func() {}) // no test used a database: never start one
	if srv != nil {
		if err := srv.close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
}

// NewDB returns a connection pool on a fresh database cloned from the
// migrated template. The pool is closed and the database dropped when t ends.
func NewDB(t testing.TB) *bun.DB {
	t.Helper()
	db := open(NewURL(t))
	t.Cleanup(func() { db.Close() })
	return db
}

// NewURL creates a fresh database cloned from the migrated template and
// returns its DSN, for tests that start processes or build their own pools.
// The database is dropped (closing any connection left) when t ends.
func NewURL(t testing.TB) string {
	t.Helper()
	s, err := get()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s.create(t, s.template)
}

// create clones template into a new database dropped when t ends.
func (s *server) create(t testing.TB, template string) string {
	t.Helper()
	name := "t_" + randomHex()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, fmt.Sprintf("CREATE DATABASE %q TEMPLATE %q", name, template)); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s.admin.ExecContext(ctx, fmt.Sprintf("DROP DATABASE %q WITH (FORCE)", name)); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.url(name)
}

// NewEmptyURL creates a fresh database without the schema and returns its
// DSN, for tests of the migrations themselves. It is dropped when t ends.
func NewEmptyURL(t testing.TB) string {
	t.Helper()
	s, err := get()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s.create(t, "template0")
}

// open connects to dsn.
func open(dsn string) *bun.DB {
	return bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn))), pgdialect.New())
}

func get() (*server, error) {
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		srv, srvErr = start(ctx)
	})
	return srv, srvErr
}

func start(ctx context.Context) (*server, error) {
	s := &server{template: "pgtest_template"}
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn != "" {
		// Test binaries of several packages may share the server at once, and
		// a template left by an earlier run may hold an older schema.
		s.template += "_" + randomHex()
	} else {
		if err := s.startCluster(ctx); err != nil {
			s.close()
			return nil, err
		}
		dsn = s.cluster.URL("postgres")
	}
	var err error
	if s.baseURL, err = url.Parse(dsn); err != nil {
		return nil, fmt.Errorf("TEST_DATABASE_URL: %w", err)
	}
	s.admin = sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	if err := s.createTemplate(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *server) startCluster(ctx context.Context) error {
	var err error
	if s.tmpDir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return err
	}
	if err := os.Chmod(s.tmpDir, 0o755); err != nil { // the server may run as the postgres user
		return err
	}
	dataDir := filepath.Join(s.tmpDir, "data")
	if err := s.startWatchdog(dataDir); err != nil {
		return err
	}
	begin := time.Now()
	if s.cluster, err = devpg.Start(ctx, devpg.Options{Dir: dataDir, Fast: true}); err != nil {
		return err
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "pgtest: PostgreSQL started on port %d in %v\n", s.cluster.Port, time.Since(begin).Round(time.Millisecond))
	}
	return nil
}

// startWatchdog starts a shell that waits for this process to end (its stdin
// pipe closes then, however the process ends) and stops the cluster and
// removes its files, so a test binary that panics or times out does not leave
// a server running. It runs in its own session so that ^C spares it.
func (s *server) startWatchdog(dataDir string) error {
	const script = `read -r _
pid=$(head -n 1 "$1/postmaster.pid" 2>/dev/null) && kill -INT "$pid" 2>/dev/null &&
for i in $(seq 100); do [ -e "$1/postmaster.pid" ] || break; sleep 0.1; done
rm -rf "$2"`
	cmd := exec.Command("/bin/sh", "-c", script, "pgtest-watchdog", dataDir, s.tmpDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // reaps it; its outcome does not matter
	s.watchdog = w
	return nil
}

func (s *server) createTemplate(ctx context.Context) error {
	if _, err := s.admin.ExecContext(ctx, fmt.Sprintf("CREATE DATABASE %q", s.template)); err != nil {
		return fmt.Errorf("create template database: %w", err)
	}
	db := open(s.url(s.template))
	err := migrations.Up(ctx, db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("migrate template database: %w", err)
	}
	// Cloning fails while anyone is connected to the template.
	_, err = s.admin.ExecContext(ctx, fmt.Sprintf("ALTER DATABASE %q ALLOW_CONNECTIONS false", s.template))
	return err
}

func (s *server) close() error {
	var err error
	if s.admin != nil {
		if s.cluster == nil { // shared server: leave it as we found it
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err = s.admin.ExecContext(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %q WITH (FORCE)", s.template))
			cancel()
		}
		s.admin.Close()
	}
	if s.cluster != nil {
		if stopErr := s.cluster.Stop(); stopErr != nil {
			err = stopErr
		}
	}
	if s.tmpDir != "" {
		if rmErr := os.RemoveAll(s.tmpDir); rmErr != nil && err == nil {
			err = rmErr
		}
	}
	if s.watchdog != nil {
		s.watchdog.Close()
	}
	return err
}

func (s *server) url(database string) string {
	u := *s.baseURL
	u.Path = "/" + database
	u.RawPath = ""
	return u.String()
}

func randomHex() string {
	b := make([]byte, 8)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

package devpg

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"
)

// tempDir returns a directory the postgres OS user can traverse (t.TempDir
// creates 0700 directories owned by the test user, possibly root).
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "devpg-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func start(t *testing.T, o Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	begin := time.Now()
	c, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start took %v (port %d)", time.Since(begin).Round(time.Millisecond), c.Port)
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func open(t *testing.T, c *Cluster) *sql.DB {
	t.Helper()
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(c.URL("postgres"))))
	t.Cleanup(func() { db.Close() })
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
	return db
}

func TestStartStopReuse(t *testing.T) {
	dir := filepath.Join(tempDir(t), "data")
	c := start(t, Options{Dir: dir, Fast: true})
	db := open(t, c)
	if _, err := db.Exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('hello')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid after Stop: %v", err)
	}

	// Same directory again: no initdb, the data is still there.
	c = start(t, Options{Dir: dir, Fast: true})
	var v string
	if err := open(t, c).QueryRow("SELECT v FROM kept").Scan(&v); err != nil || v != "hello" {
		t.Fatalf("kept = %q, %v", v, err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
}

// A process killed before Stop leaves its server running; the next Start on
// the directory must replace it rather than fail.
func TestStartStopsLeftoverServer(t *testing.T) {
	dir := filepath.Join(tempDir(t), "data")
	old := start(t, Options{Dir: dir, Fast: true})
	c := start(t, Options{Dir: dir, Fast: true})
	if c.Port == old.Port {
		t.Fatalf("both clusters on port %d", c.Port)
	}
	open(t, c)
	if _, err := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(old.URL("postgres")), pgdriver.WithDialTimeout(time.Second))).Exec("SELECT 1"); err == nil {
		t.Fatal("the leftover server still answers")
	}
	old.stopped = true // its server is gone; nothing for its cleanup to stop
}

func TestBinDir(t *testing.T) {
	dir, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(dir)
}

// Halt stops a running server on a data directory it did not start, and
// does nothing where none runs (a stopped cluster, a folder never used).
func TestHalt(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(tempDir(t), "data")
	if err := Halt(ctx, dir); err != nil {
		t.Fatalf("no cluster: %v", err)
	}
	c := start(t, Options{Dir: dir, Fast: true})
	if err := Halt(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(c.URL("postgres")), pgdriver.WithDialTimeout(time.Second))).Exec("SELECT 1"); err == nil {
		t.Fatal("the server still answers after Halt")
	}
	if err := Halt(ctx, dir); err != nil {
		t.Fatalf("halted twice: %v", err)
	}
	c.stopped = true // nothing left for its cleanup to stop
}

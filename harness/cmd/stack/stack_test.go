package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// TestMain lets the test binary be the UI child startUI runs (it runs
// os.Executable(), which is this binary here).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == uiCommand {
		main()
		return
	}
	os.Exit(m.Run())
}

// The Web UI runs as a child process: it serves, and a port it cannot
// listen on is startUI's error, never the end of the stack's process
// (the UI server exits its process when it cannot listen; in the stack's
// own process that skipped every deferred stop and left the PostgreSQL
// clusters running).
func TestStartUI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const temporal = "127.0.0.1:1" // the UI dials Temporal per request only

	ui, url, err := startUI(ctx, dir, 0, temporal)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s/: %s", url, resp.Status)
	}
	pid := ui.PID()
	if _, err := ui.Terminate(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if ui.PID() != 0 || procstack.Alive(pid) {
		t.Errorf("the UI child (pid %d) outlived Terminate", pid)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	_, _, err = startUI(ctx, dir, port, temporal)
	if err == nil || !strings.Contains(err.Error(), "port "+strconv.Itoa(port)) {
		t.Errorf("startUI on a taken port: %v, want an error naming port %d", err, port)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "temporal-ui.log"))
	t.Logf("startUI on a taken port: %v; the child logged:\n%s", err, log)
}

// A --dir holding someone's files is refused before anything starts, and
// the files stay.
func TestRunRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"--dir", dir, "--prebuilt", "--bin", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "refusing to empty it") {
		t.Errorf("run on a folder of unrelated files: %v, want a refusal", err)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("the unrelated file is gone: %v", err)
	}
}

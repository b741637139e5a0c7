package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// With a default port taken, the ports nobody chose move together by the
// smallest free step; a port someone chose stays, taken or not; an offset
// given is applied as it is.
func TestApplyOffset(t *testing.T) {
	taken := map[int]bool{8080: true, 7243: true}
	free := func(p int) bool { return !taken[p] }
	api, temporal, chosenPort := 8080, 7233, 7243
	ps := []devPort{{"api", &api, false}, {"temporal", &temporal, false}, {"chosen", &chosenPort, true}}
	off, err := applyOffset(ps, -1, free)
	if err != nil || off != 20 || api != 8100 || temporal != 7253 || chosenPort != 7243 {
		t.Fatalf("offset %d (%v): api %d, temporal %d, chosen %d; want 20: 8100, 7253, 7243 (8090 is free but 7243 is taken)", off, err, api, temporal, chosenPort)
	}

	api, temporal = 8080, 7233
	if off, err := applyOffset(ps[:2], 5, free); err != nil || off != 5 || api != 8085 || temporal != 7238 {
		t.Fatalf("offset %d (%v): %d, %d; want 5 as given", off, err, api, temporal)
	}

	api, temporal = 8080, 7233
	if _, err := applyOffset(ps[:2], -1, func(int) bool { return false }); err == nil {
		t.Fatal("no free ports anywhere, and no error")
	}
}

// A second make dev beside a first: parseFlags finds the API's default
// port taken and moves every port nobody set, and the data folder with
// them; ports set by flag stay; --port-offset is applied as given.
func TestParseFlagsMovesPastATakenPort(t *testing.T) {
	for _, v := range []string{"HTTP_ADDR", "WORKER_HTTP_ADDR", "DEV_TEMPORAL_PORT", "DEV_UI_PORT", "DEV_PG_PORT", "DEV_DATA_DIR", "DEV_PORT_OFFSET", "DATABASE_URL"} {
		t.Setenv(v, "")
	}
	if l, err := net.Listen("tcp", "127.0.0.1:8080"); err == nil { // else something holds it already
		defer l.Close()
	}
	t.Chdir(t.TempDir())
	// Ports moved, the data stays: no make dev runs on .data.
	o, err := parseFlags(nil)
	if err != nil || o.portOffset < portStep || o.dataDir != ".data" {
		t.Fatalf("with .data unused: offset %d, data %s (%v); want ports moved and .data kept", o.portOffset, o.dataDir, err)
	}
	// A make dev's PostgreSQL runs on .data (this process stands in for it).
	if err := os.MkdirAll(filepath.Join(".data", "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(".data", "postgres", "postmaster.pid"), []byte(strconv.Itoa(os.Getpid())+"\n/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err = parseFlags([]string{"--temporal-port", "7233"})
	if err != nil {
		t.Fatal(err)
	}
	_, apiPort, _ := hostPort(o.httpAddr)
	_, workerPort, _ := hostPort(o.workerAddr)
	if o.portOffset < portStep || apiPort != 8080+o.portOffset || workerPort != 9090+o.portOffset ||
		o.uiPort != 8233+o.portOffset || o.dataDir != ".data-"+strconv.Itoa(o.portOffset) {
		t.Fatalf("offset %d: api %d, worker %d, ui %d, data %s; want all moved past the taken 8080", o.portOffset, apiPort, workerPort, o.uiPort, o.dataDir)
	}
	if o.temporalPort != 7233 {
		t.Fatalf("the Temporal port set by flag moved to %d", o.temporalPort)
	}

	o, err = parseFlags([]string{"--port-offset", "30"})
	if err != nil || o.portOffset != 30 || o.uiPort != 8263 || o.dataDir != ".data-30" || o.autoOffset {
		t.Fatalf("--port-offset 30: %+v (%v)", o, err)
	}
	if _, err := parseFlags([]string{"--port-offset", "70000"}); err == nil {
		t.Fatal("--port-offset 70000 accepted: every port past 65535")
	}
}

// --traces adds Jaeger's ports to the ones an offset moves, and only then.
func TestParseFlagsTracesPorts(t *testing.T) {
	for _, v := range []string{"HTTP_ADDR", "WORKER_HTTP_ADDR", "DEV_TEMPORAL_PORT", "DEV_UI_PORT", "DEV_PG_PORT", "DEV_DATA_DIR", "DEV_PORT_OFFSET", "DATABASE_URL", "DEV_TRACES"} {
		t.Setenv(v, "")
	}
	t.Chdir(t.TempDir())
	o, err := parseFlags([]string{"--port-offset", "30"})
	if err != nil || o.traces || o.jaegerPorts != nil {
		t.Fatalf("without --traces: traces %v, Jaeger's ports %v (%v)", o.traces, o.jaegerPorts, err)
	}
	o, err = parseFlags([]string{"--traces", "--port-offset", "30"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for name, p := range o.jaegerPorts {
		got[name] = *p
	}
	want := map[string]int{"JAEGER_OTLP_GRPC": 4347, "JAEGER_OTLP_HTTP": 4348, "JAEGER_QUERY_HTTP": 16716, "JAEGER_QUERY_GRPC": 16715}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("--traces --port-offset 30: Jaeger's ports %v, want %v", got, want)
	}
}

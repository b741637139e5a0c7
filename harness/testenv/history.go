package testenv

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"
)

// RecordHistoriesEnv names the variable that makes RecordGolden write the
// golden histories under workflows/testdata (see docs/operations.md,
// changing a workflow).
const RecordHistoriesEnv = "RECORD_HISTORIES"

// GoldenRelease is the release whose folder under workflows/testdata new
// golden histories go to: the one being made. Earlier releases' folders
// are kept as recorded, so their shapes keep replaying.
const GoldenRelease = "0.2.0"

// History reads a workflow's whole history (its latest run).
func (e *Env) History(t testing.TB, workflowID string) *historypb.History {
	t.Helper()
	return e.RunHistory(t, workflowID, "")
}

// RunHistory reads one run's whole history ("" the latest).
func (e *Env) RunHistory(t testing.TB, workflowID, runID string) *historypb.History {
	t.Helper()
	iter := e.Temporal.GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return &h
}

// RecordGolden replays h against today's workflow code (registered by
// register) and, when RECORD_HISTORIES is set, writes it as the golden
// history name of GoldenRelease (workflows/testdata/<release>/<name>) for
// the replay tests of the workflows package.
func RecordGolden(t testing.TB, h *historypb.History, name string, register func(worker.WorkflowReplayer)) {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no source path to find workflows/testdata by")
	}
	path := filepath.Join(filepath.Dir(self), "..", "..", "workflows", "testdata", GoldenRelease, name)
	r := worker.NewWorkflowReplayer()
	register(r)
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatalf("replaying a history of %d events: %v", len(h.Events), err)
	}
	if os.Getenv(RecordHistoriesEnv) == "" {
		return
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d events to %s", len(h.Events), path)
}

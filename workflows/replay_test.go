package workflows_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/workflows"
)

// Each folder under testdata holds the golden histories of one release
// (testdata/0.1.0, ...), recorded from the end-to-end setup
// (RECORD_HISTORIES=1, see docs/operations.md: changing a workflow). A
// deployment of that release may hold workflows of these shapes (a key's
// workflow sleeps for months), so every one must replay against the
// current code until a release drops them: a change that breaks one goes
// behind workflow.GetVersion, and its new history is recorded in the next
// release's folder.
const firstRelease = "testdata/0.1.0"

// goldenWorkflows are the workflows a golden history may be of, by type.
var goldenWorkflows = map[string]any{
	"DeliveryWorkflow": workflows.DeliveryWorkflow,
	"RecoverWorkflow":  workflows.RecoverWorkflow,
	"APIKey":           workflows.APIKey,
	"WebhookSecret":    workflows.WebhookSecret,
}

func TestWorkflowsReplayGoldenHistories(t *testing.T) {
	releases := releaseFolders(t)
	if !slices.Contains(releases, firstRelease) {
		t.Fatalf("no %s among the release folders %v", firstRelease, releases)
	}
	var files []string
	for _, dir := range releases {
		found, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Fatalf("no golden history in %s", dir)
		}
		files = append(files, found...)
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) { replay(t, file) })
	}
}

// releaseFolders are the folders under testdata.
func releaseFolders(t *testing.T) []string {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join("testdata", e.Name()))
		}
	}
	return dirs
}

// replay replays one history on the workflow of its started event's type.
func replay(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	typ := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
	wf, ok := goldenWorkflows[typ]
	if !ok {
		t.Fatalf("a history of workflow type %q, which is not among goldenWorkflows", typ)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(wf)
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatal(err)
	}
}

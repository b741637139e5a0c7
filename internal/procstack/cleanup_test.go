package procstack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ClearDir empties only a run's folder: a folder of unrelated files (a
// mistyped --dir) is refused and left as it was.
func TestClearDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(path string) bool { _, err := os.Stat(path); return err == nil }

	// Someone's files: refused, kept.
	home := filepath.Join(root, "home")
	write(filepath.Join(home, "notes.txt"))
	err := ClearDir(ctx, home)
	if err == nil || !strings.Contains(err.Error(), "refusing to empty it") {
		t.Errorf("a folder of unrelated files: %v, want a refusal", err)
	}
	if !exists(filepath.Join(home, "notes.txt")) {
		t.Fatal("ClearDir deleted a file of a folder that was not a run's")
	}

	// A new folder and an empty one become marked run folders.
	for _, dir := range []string{filepath.Join(root, "new", "run"), filepath.Join(root, "empty")} {
		if dir == filepath.Join(root, "empty") {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := ClearDir(ctx, dir); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !exists(filepath.Join(dir, RunMarker)) {
			t.Errorf("%s: no %s after ClearDir", dir, RunMarker)
		}
	}

	// A run's folder (marked, or with a stack.json from before the
	// marker) is emptied.
	for _, marker := range []string{RunMarker, "stack.json"} {
		dir := filepath.Join(root, "run-"+marker)
		write(filepath.Join(dir, marker))
		write(filepath.Join(dir, "api-1.log"))
		write(filepath.Join(dir, "postgres", "PG_VERSION"))
		if err := ClearDir(ctx, dir); err != nil {
			t.Fatalf("a run folder marked by %s: %v", marker, err)
		}
		if exists(filepath.Join(dir, "api-1.log")) || exists(filepath.Join(dir, "postgres")) {
			t.Errorf("a run folder marked by %s was not emptied", marker)
		}
	}
}

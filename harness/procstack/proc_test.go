package procstack

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// Start gives up as soon as its context ends (Ctrl-C during harness/cmd/stack's
// startup), whether it waits for a log line or for a readiness check,
// and leaves the process to the caller, who stops it.
func TestStartEndsWithContext(t *testing.T) {
	for _, c := range []struct {
		name  string
		ready string
		check func(context.Context) error
	}{
		{"log line", "never written", nil},
		{"readiness check", "", func(context.Context) error { return errors.New("not yet") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &Proc{Name: "sleeper", Bin: "/bin/sleep", Args: []string{"60"},
				LogPath: filepath.Join(t.TempDir(), "sleeper.log"), Ready: c.ready, ReadyCheck: c.check}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			begin := time.Now()
			err := p.Start(ctx, time.Minute)
			took := time.Since(begin)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Start: %v, want context.Canceled", err)
			}
			if took > 5*time.Second {
				t.Errorf("Start returned %v after its context ended, want at once", took)
			}
			if p.PID() == 0 {
				t.Error("the process is gone; the caller's Stop should end it")
			}
			if err := p.Kill(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

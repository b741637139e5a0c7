package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// A recovery holds its next page until this page's redeliveries are made:
// with pages of two and the redeliveries left unmade, the third signal
// waits while none, then one, of the first page's attempts is recorded,
// and comes once both are. So a recovery never has more than a page of
// redeliveries outstanding against its subscription.
func TestRecoverWorkflowWaitsForThePagesRedeliveries(t *testing.T) {
	r := newRecovery(t, 4)
	r.hold = true
	ctx := context.Background()
	waitSignals := func(n int) {
		deadline := time.Now().Add(10 * time.Second)
		for r.signals() < n {
			if time.Now().After(deadline) {
				t.Errorf("%d signals, want %d", r.signals(), n)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		waitSignals(2)
		// More than two of the wait's polls (a second apart).
		time.Sleep(2200 * time.Millisecond)
		if n := r.signals(); n != 2 {
			t.Errorf("%d signals before the first page's redeliveries were made, want 2", n)
		}
		r.made(ctx, r.failed[0])
		time.Sleep(1200 * time.Millisecond)
		if n := r.signals(); n != 2 {
			t.Errorf("%d signals with one of the first page's two redeliveries made, want 2", n)
		}
		r.made(ctx, r.failed[1])
		waitSignals(4)
		r.made(ctx, r.failed[2])
		r.made(ctx, r.failed[3])
	}()
	p, next := r.run(r.input(2, 10))
	<-done
	if next != nil {
		t.Fatal("continued as new")
	}
	if p.State != models.RecoveryCompleted || p.Found != 4 || p.Redelivered != 4 {
		t.Fatalf("progress %+v", p)
	}
}

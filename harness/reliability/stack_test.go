package reliability

import (
	"context"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// retrySchedule is WEBHOOK_RETRY_SCHEDULE for every scenario: short, so a
// failing endpoint reaches its final attempt within a second.
const retrySchedule = "200ms,200ms,200ms"

// attemptsPerSchedule is how many attempts retrySchedule makes in all.
const attemptsPerSchedule = 4

// shutdownTimeout is SHUTDOWN_TIMEOUT: long enough for a 5-second attempt
// to finish when the worker is asked to stop.
const shutdownTimeout = 30 * time.Second

// stack is the whole service as separate processes (harness/procstack).
type stack = procstack.Stack

// proc is one of its processes.
type proc = procstack.Proc

// startStack starts PostgreSQL, Temporal, the migrations, the API and the
// worker. certFile is the PEM the worker trusts for receivers.
func startStack(ctx context.Context, dir, bin, certFile string) (*stack, error) {
	return procstack.Start(ctx, procstack.Options{
		Dir: dir, Bin: bin, CertFile: certFile,
		TaskQueue:       "reliability",
		RetrySchedule:   retrySchedule,
		ShutdownTimeout: shutdownTimeout,
	})
}

// errStillRunning: a process outlived the bound given to Terminate.
var errStillRunning = procstack.ErrStillRunning

// buildBinaries builds the api, worker, admin and devtemporal commands.
var buildBinaries = procstack.BuildBinaries

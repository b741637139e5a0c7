// Package worker registers the service's workflows and activities with a
// Temporal worker and runs it.
package worker

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Register adds every workflow and activity to r. Tests use it with the
// testsuite environment, so test and production registrations cannot drift.
func Register(r sdkworker.Registry, a *activities.Activities) {
	r.RegisterActivity(a)
	r.RegisterWorkflow(workflows.APIKey)
	r.RegisterWorkflow(workflows.DeliveryWorkflow)
	r.RegisterWorkflow(workflows.RetentionWorkflow)
	r.RegisterWorkflow(workflows.RecoverWorkflow)
	r.RegisterWorkflow(workflows.WebhookSecret)
}

// Options configure Run.
type Options struct {
	TaskQueue string
	// StopTimeout (SHUTDOWN_TIMEOUT) is how long in-flight attempts may finish
	// on stop: a cancelled attempt whose POST was answered would be sent again.
	StopTimeout time.Duration
	Log         *slog.Logger
}

// Run polls the task queue until ctx ends, retrying a failed start and
// restarting after a fatal error, so the process stays up meanwhile.
func Run(ctx context.Context, c client.Client, o Options, a *activities.Activities) error {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wait := time.Second
	for {
		fatal := make(chan error, 1)
		w := sdkworker.New(c, o.TaskQueue, sdkworker.Options{
			WorkerStopTimeout: o.StopTimeout,
			// Without this, a fatal error (namespace gone) leaves it polling nothing.
			OnFatalError: func(err error) {
				select {
				case fatal <- err:
				default:
				}
			},
		})
		Register(w, a)
		err := w.Start()
		if err == nil {
			log.Info("temporal worker polling", slog.String("taskQueue", o.TaskQueue))
			select {
			case <-ctx.Done():
				w.Stop() // waits up to StopTimeout for in-flight activities
				return nil
			case err = <-fatal:
				w.Stop()
				log.Error("temporal worker stopped on a fatal error; starting again", slog.Any("error", err), slog.Duration("in", wait))
			}
		} else {
			log.Warn("temporal worker could not start; retrying", slog.Any("error", err), slog.Duration("in", wait))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

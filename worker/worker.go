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
	// StopTimeout is how long a stopping worker lets in-flight activities
	// (delivery attempts) finish before cancelling them (SHUTDOWN_TIMEOUT).
	// Zero would cancel at once, and an attempt whose POST had already
	// been answered would be sent again by another worker.
	StopTimeout time.Duration
	Log         *slog.Logger
}

// Run polls the task queue until ctx ends. It keeps trying to start while
// Temporal is unreachable instead of failing, and starts again after a
// fatal error, so the process (its outbox sweepers, its health endpoints)
// stays up and the worker polls as soon as Temporal lets it.
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
			// The SDK stops a worker by itself on a fatal error (namespace
			// gone, permission denied); without this the process would stay
			// up, ready, and polling nothing.
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

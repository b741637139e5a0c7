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

// workflowTaskSlots bounds the workflow tasks in progress: enough for a
// receiver up to 20 s slow on several subscriptions (each holds at most
// WEBHOOK_MAX_IN_FLIGHT), few enough that a backlog stays in the queue;
// eager starts may take half of them (eagerSlots). taskPollers keeps them
// fed from the queue (SDK default: 2).
const (
	workflowTaskSlots = 64
	taskPollers       = 8
	// activityTaskSlots is the SDK's default, named for the share below.
	activityTaskSlots = 1000
)

// Slow receivers: a subscription is slow while an attempt of its has been
// in flight longer than slowAttempt, and for slowCoolDown after a request
// took longer. Its first attempts are then made as regular activities, so
// they never hold a workflow-task slot (nor keep the other recipients of
// the same event waiting in it), and its workspace may hold at most an
// eighth of this worker's activity slots. Any workspace may hold all but an
// eighth of either kind, so even a lone burst leaves room for another
// (docs/operations.md#priorities-and-fairness).
const (
	slowAttempt  = time.Second
	slowCoolDown = time.Minute
)

// AttemptShares are the workspace shares of this worker's slots, for
// activities.Activities' LocalShare and RegularShare.
func AttemptShares() (local, regular *activities.WorkspaceShare) {
	share := func(slots, slow int) *activities.WorkspaceShare {
		return &activities.WorkspaceShare{Budget: slowAttempt, CoolDown: slowCoolDown, Max: slots - slots/8, Slow: slow}
	}
	local = share(workflowTaskSlots, workflowTaskSlots-workflowTaskSlots/8)
	local.RefuseSlowSubscriptions = true
	return local, share(activityTaskSlots, activityTaskSlots/8)
}

// Run polls the task queue until ctx ends, retrying a failed start and
// restarting after a fatal error, so the process stays up meanwhile.
func Run(ctx context.Context, c client.Client, o Options, a *activities.Activities) error {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// No sticky queues: with a backlog on its sticky queue (a flood's retry
	// timers) the SDK polls only that one, so new events, other workspaces'
	// included, waited behind it, outside the fair, prioritised task queue.
	// Every workflow task replays its history instead: 7 events for most
	// deliveries, up to about 2,300 at the fan-out cap with every attempt
	// failing (docs/operations.md#priorities-and-fairness).
	sdkworker.SetStickyWorkflowCacheSize(0)
	wait := time.Second
	for {
		fatal := make(chan error, 1)
		slots, err := tuner()
		if err != nil {
			return err
		}
		w := sdkworker.New(c, o.TaskQueue, sdkworker.Options{
			WorkerStopTimeout: o.StopTimeout,
			// Few workflow tasks at once (each holds its local first
			// attempts), so a backlog waits in the task queue, where
			// priority and fairness keys order it, not in this process,
			// first come, first served; eager starts only while half of
			// them are idle (eagerSlots, docs/operations.md#priorities-and-fairness).
			Tuner:                            slots,
			MaxConcurrentWorkflowTaskPollers: taskPollers,
			MaxConcurrentActivityTaskPollers: taskPollers,
			// Without this, a fatal error (namespace gone) leaves it polling nothing.
			OnFatalError: func(err error) {
				select {
				case fatal <- err:
				default:
				}
			},
		})
		Register(w, a)
		err = w.Start()
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

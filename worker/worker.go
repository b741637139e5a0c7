// Package worker registers the service's workflows and activities with a
// Temporal worker and runs it.
package worker

import (
	"context"

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
}

// Run polls taskQueue until ctx ends.
func Run(ctx context.Context, c client.Client, taskQueue string, a *activities.Activities) error {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{})
	Register(w, a)
	stop := make(chan any)
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	return w.Run(stop)
}

package workflows

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

// SignalRedeliver asks the event's delivery workflow, open or started anew,
// for one more attempt to one subscription, so one run at a time numbers all
// attempts in one sequence. Callers refuse undispatched events, whose outbox
// start would find the ID taken. sig names the subscription (and, if need
// be, the attempt wanted or the request's ID); priority is the key a new run
// starts with (PriorityPerson, or PriorityRecovery).
func SignalRedeliver(ctx context.Context, c client.Client, ev models.Event, taskQueue string, sig Redelivery, priority int) error {
	options := func(listed int) client.StartWorkflowOptions {
		opts := DeliveryStartOptions(ev, taskQueue, listed)
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED
		opts.StaticSummary = "Redeliver " + string(ev.Type) + " event"
		opts.Priority = workspacePriority(ev.WorkspaceID, priority)
		return opts
	}
	tries := []client.StartWorkflowOptions{options(0)}
	if len(ev.Recipients) > subscriptionIDsFit {
		tries = append(tries, options(subscriptionIDsFit))
	}
	// The caller's trace (a redeliver request, a recovery) links to the
	// publish's: the redelivery is its own work, on the event's behalf.
	ctx, span := tracing.Tracer().Start(ctx, "redeliver", trace.WithLinks(publishLink(ev)...),
		trace.WithAttributes(attribute.String("event.id", ev.ID.String()), attribute.String("subscription.id", sig.SubscriptionID.String())))
	defer span.End()
	in := &DeliveryInput{EventID: ev.ID, Redelivery: true}
	_, err := startOrBare(func(opts client.StartWorkflowOptions) error {
		_, err := c.SignalWithStartWorkflow(ctx, opts.ID, RedeliverSignal, sig, opts, DeliveryWorkflow, in)
		return err
	}, tries...)
	return err
}

// publishLink links to the span that published ev, none when it was
// published with tracing off.
func publishLink(ev models.Event) []trace.Link {
	sc := trace.SpanContextFromContext(tracing.Carrier(ev.Trace).Context(context.Background()))
	if !sc.IsValid() {
		return nil
	}
	return []trace.Link{{SpanContext: sc}}
}

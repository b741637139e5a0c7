package workflows

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/models"
)

// RecoverProgressQuery answers *RecoverProgress, for a closed run too.
const RecoverProgressQuery = "progress"

// Recovery's defaults: after RecoverPagesPerRun pages (5,000 deliveries) a
// run continues as new, so its history stays a few hundred events.
const (
	RecoverPageSize    = 100
	RecoverPagesPerRun = 50
)

// RecoverInput is a recovery's request and, after continue-as-new, its progress.
type RecoverInput struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	Since          time.Time `json:"since"`
	Until          time.Time `json:"until"`
	// StartedAt is when the API accepted the request.
	StartedAt time.Time `json:"startedAt"`
	// PageSize and PagesPerRun override the defaults (tests).
	PageSize    int `json:"pageSize,omitempty"`
	PagesPerRun int `json:"pagesPerRun,omitempty"`
	// Progress is carried from the previous run; nil in the first.
	Progress *RecoverProgress `json:"progress,omitempty"`
}

// RecoverProgress is the recovery as the API shows it, and the cursor of its walk.
type RecoverProgress struct {
	models.WebhookRecovery
	Cursor *activities.RecoverCursor `json:"cursor,omitempty"`
}

// RecoverWorkflow redelivers a subscription's failed deliveries of events
// created in [Since, Until) a page (RecoverPage) at a time, each page waiting
// out the last one's attempts (up to RecoverPageWait) to spare send limits.
func RecoverWorkflow(ctx workflow.Context, in *RecoverInput) (*RecoverProgress, error) {
	p := in.Progress
	if p == nil {
		started := in.StartedAt
		if started.IsZero() {
			started = workflow.Now(ctx)
		}
		info := workflow.GetInfo(ctx)
		id := info.FirstRunID
		if id == "" { // the SDK's test environment
			id = info.WorkflowExecution.RunID
		}
		p = &RecoverProgress{WebhookRecovery: models.WebhookRecovery{
			ID: id, SubscriptionID: in.SubscriptionID,
			State: models.RecoveryRunning, Since: in.Since, Until: in.Until, StartedAt: started,
		}}
	}
	if err := workflow.SetQueryHandler(ctx, RecoverProgressQuery, func() (*RecoverProgress, error) { return p, nil }); err != nil {
		return nil, err
	}
	pageSize, pagesPerRun := in.PageSize, in.PagesPerRun
	if pageSize <= 0 {
		pageSize = RecoverPageSize
	}
	if pagesPerRun <= 0 {
		pagesPerRun = RecoverPagesPerRun
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: activities.RecoverPageWait + 5*time.Minute,
		HeartbeatTimeout:    30 * time.Second,
		// A retry resumes the page: repeated signals carry the same attempt
		// numbers, which the delivery workflows drop.
		ScheduleToCloseTimeout: OutageTolerance,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    untilScheduleToClose,
		},
		Summary: "redeliver a page of failed deliveries",
	})
	requestID := "recover:" + workflow.GetInfo(ctx).WorkflowExecution.ID
	for pages := 0; ; pages++ {
		workflow.SetCurrentDetails(ctx, recoverDetails(p))
		if pages >= pagesPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			next := *in
			next.Progress = p
			return nil, workflow.NewContinueAsNewError(ctx, RecoverWorkflow, &next)
		}
		var res activities.RecoverPageResult
		err := workflow.ExecuteActivity(actx, deliveryActs.RecoverPage, &activities.RecoverPageInput{
			WorkspaceID: in.WorkspaceID, SubscriptionID: in.SubscriptionID,
			Since: in.Since, Until: in.Until, After: p.Cursor, PageSize: pageSize, RequestID: requestID,
		}).Get(ctx, &res)
		if err != nil {
			finishRecovery(ctx, p, models.RecoveryFailed, "")
			return nil, err
		}
		p.Found += res.Found
		p.Redelivered += res.Redelivered
		if res.Cursor != nil {
			p.Cursor = res.Cursor
		}
		switch {
		case res.Stopped != "":
			finishRecovery(ctx, p, models.RecoveryStopped, res.Stopped)
			return p, nil
		case res.Done:
			finishRecovery(ctx, p, models.RecoveryCompleted, "")
			return p, nil
		}
	}
}

func finishRecovery(ctx workflow.Context, p *RecoverProgress, state models.RecoveryState, reason string) {
	now := workflow.Now(ctx)
	p.State, p.StopReason, p.Done, p.FinishedAt = state, reason, true, &now
	workflow.SetCurrentDetails(ctx, recoverDetails(p))
}

func recoverDetails(p *RecoverProgress) string {
	s := fmt.Sprintf("Recovery of webhook subscription %s, events created from %s to %s: %s, %d failed deliveries found, %d redelivered",
		p.SubscriptionID, p.Since.UTC().Format(time.RFC3339), p.Until.UTC().Format(time.RFC3339), p.State, p.Found, p.Redelivered)
	if p.StopReason != "" {
		s += " (" + p.StopReason + ")"
	}
	return s
}

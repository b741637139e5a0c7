package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// retentionSpec runs daily at 03:17 UTC, off the hour other cluster jobs take.
var retentionSpec = client.ScheduleSpec{
	Calendars: []client.ScheduleCalendarSpec{{
		Second:     []client.ScheduleRange{{Start: 0}},
		Minute:     []client.ScheduleRange{{Start: 17}},
		Hour:       []client.ScheduleRange{{Start: 3}},
		DayOfMonth: []client.ScheduleRange{{Start: 1, End: 31}},
		Month:      []client.ScheduleRange{{Start: 1, End: 12}},
		DayOfWeek:  []client.ScheduleRange{{Start: 0, End: 6}},
	}},
}

// EnsureRetentionSchedule creates the task queue's daily retention schedule,
// or brings an existing one up to date, so every worker start may call it.
func EnsureRetentionSchedule(ctx context.Context, c client.Client, taskQueue string, retention time.Duration) error {
	id := workflows.RetentionScheduleID(taskQueue)
	action := &client.ScheduleWorkflowAction{
		ID:        id + ":run",
		Workflow:  workflows.RetentionWorkflow,
		Args:      []any{&workflows.RetentionInput{Retention: activities.Duration(retention)}},
		TaskQueue: taskQueue,
	}
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:      id,
		Spec:    retentionSpec,
		Action:  action,
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		// A missed day (Temporal down) is made up within a day.
		CatchupWindow: 24 * time.Hour,
		Note:          "deletes webhook delivery records older than DELIVERY_RETENTION",
	})
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return err
	}
	return c.ScheduleClient().GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := in.Description.Schedule
			spec := retentionSpec
			s.Spec = &spec
			s.Action = action
			if s.Policy == nil {
				s.Policy = &client.SchedulePolicies{}
			}
			s.Policy.Overlap = enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
			s.Policy.CatchupWindow = 24 * time.Hour
			return &client.ScheduleUpdate{Schedule: &s}, nil
		},
	})
}

// KeepRetentionSchedule retries EnsureRetentionSchedule until it succeeds or ctx ends.
func KeepRetentionSchedule(ctx context.Context, c client.Client, taskQueue string, retention time.Duration, log *slog.Logger) {
	keepTrying(ctx, log, "retention schedule", func(ctx context.Context) error {
		return EnsureRetentionSchedule(ctx, c, taskQueue, retention)
	}, slog.String("scheduleId", workflows.RetentionScheduleID(taskQueue)), slog.Duration("retention", retention))
}

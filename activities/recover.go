package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Redeliverer asks an event's delivery workflow for one more attempt to a
// subscription (workflows.SignalRedeliver, which activities cannot import:
// workflows import activities). The worker's wiring binds it to its
// Temporal client and task queue.
type Redeliverer func(ctx context.Context, ev models.Event, subscriptionID uuid.UUID, requestID string) error

// RecoverCursor is where a recovery's walk stands (store.RecoverCursor).
type RecoverCursor = store.RecoverCursor

// RecoverPageInput is one page of a recovery: the subscription's failed
// deliveries of events created in [Since, Until), after After.
type RecoverPageInput struct {
	WorkspaceID    uuid.UUID      `json:"workspaceId"`
	SubscriptionID uuid.UUID      `json:"subscriptionId"`
	Since          time.Time      `json:"since"`
	Until          time.Time      `json:"until"`
	After          *RecoverCursor `json:"after,omitempty"`
	PageSize       int            `json:"pageSize"`
	// RequestID goes with every redelivery signal (the history shows who
	// asked).
	RequestID string `json:"requestId"`
}

// RecoverPageResult is what a page did; it is also the activity's
// heartbeat, so a retried attempt resumes after the last event it
// redelivered instead of redelivering the page again.
type RecoverPageResult struct {
	// Found and Redelivered count this page's failed deliveries and the
	// redeliveries asked for; they differ only for an event deleted
	// (retention) between the read and its redelivery.
	Found       int            `json:"found"`
	Redelivered int            `json:"redelivered"`
	Cursor      *RecoverCursor `json:"cursor,omitempty"`
	// Done: the window has nothing after Cursor.
	Done bool `json:"done"`
	// Stopped names why the subscription can no longer be recovered
	// (models.RecoveryStopDisabled, models.RecoveryStopDeleted).
	Stopped string `json:"stopped,omitempty"`
}

// errNoRedeliverer: the worker was built without Temporal wiring; retrying
// cannot help, but the activity's retry policy bounds it.
var errNoRedeliverer = errors.New("recovery: the worker has no Redeliver function")

// RecoverPage redelivers one page of a subscription's failed deliveries,
// oldest event first: for each, one redelivery signal to its event's
// delivery workflow, which makes the attempt (numbered after the earlier
// ones, same webhook-id). After each signal it heartbeats its progress,
// so a retry (the worker died, Temporal refused a signal) starts after
// the last event signalled. A worker killed between a signal and its
// heartbeat reaching the server may signal that event again on retry: one
// more attempt, numbered like any other, never a lost one.
//
// The subscription is read first: disabled or deleted, the page stops
// (Stopped) and nothing is signalled. A redelivery that fails again, the
// receiver still down, leaves its delivery failed; a later recovery finds
// it again.
func (a *Activities) RecoverPage(ctx context.Context, in *RecoverPageInput) (*RecoverPageResult, error) {
	if a.Redeliver == nil {
		return nil, errNoRedeliverer
	}
	res := &RecoverPageResult{Cursor: in.After}
	if activity.HasHeartbeatDetails(ctx) {
		var hb RecoverPageResult
		if err := activity.GetHeartbeatDetails(ctx, &hb); err == nil {
			res = &hb
		}
	}
	sub, err := a.Store.Webhooks().Get(ctx, in.WorkspaceID, in.SubscriptionID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		res.Stopped = models.RecoveryStopDeleted
		return res, nil
	case err != nil:
		return nil, err
	case !sub.Enabled:
		res.Stopped = models.RecoveryStopDisabled
		return res, nil
	}
	// A resumed page reads only what its first attempt had not reached,
	// so the page ends where it would have.
	limit := in.PageSize - res.Found
	if limit <= 0 {
		return res, nil
	}
	events, err := a.Store.Deliveries().FailedPage(ctx, in.WorkspaceID, in.SubscriptionID, in.Since, in.Until, res.Cursor, limit)
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		res.Found++
		switch err := a.Redeliver(ctx, ev, in.SubscriptionID, in.RequestID); {
		case err == nil:
			res.Redelivered++
		case errors.Is(err, models.ErrNotFound):
			// The event is gone: nothing to redeliver.
		default:
			return nil, fmt.Errorf("redeliver event %s: %w", ev.ID, err)
		}
		res.Cursor = &RecoverCursor{EventDateCreated: ev.DateCreated, EventID: ev.ID}
		activity.RecordHeartbeat(ctx, res)
	}
	res.Done = len(events) < limit
	return res, nil
}

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

// Redeliverer is workflows.SignalRedeliver, which activities cannot import;
// the worker's wiring binds it. attempt is workflows.Redelivery.Attempt.
type Redeliverer func(ctx context.Context, ev models.Event, subscriptionID uuid.UUID, requestID string, attempt int) error

// RecoverPageWait bounds a page's wait, so a recovery moves on however slow
// the receiver.
const RecoverPageWait = 5 * time.Minute

const recoverPoll = time.Second

// RecoverCursor is where a recovery's walk stands (store.RecoverCursor).
type RecoverCursor = store.RecoverCursor

// RecoverPageInput is a page of a recovery's window [Since, Until), after After.
type RecoverPageInput struct {
	WorkspaceID    uuid.UUID      `json:"workspaceId"`
	SubscriptionID uuid.UUID      `json:"subscriptionId"`
	Since          time.Time      `json:"since"`
	Until          time.Time      `json:"until"`
	After          *RecoverCursor `json:"after,omitempty"`
	PageSize       int            `json:"pageSize"`
	// RequestID names the asker in every redelivery signal.
	RequestID string `json:"requestId"`
}

// RecoverPageResult is what a page did.
type RecoverPageResult struct {
	// Found and Redelivered differ only for events deleted meanwhile.
	Found       int            `json:"found"`
	Redelivered int            `json:"redelivered"`
	Cursor      *RecoverCursor `json:"cursor,omitempty"`
	// Done: the window has nothing after Cursor.
	Done bool `json:"done"`
	// Stopped says why the subscription can no longer be recovered.
	Stopped string `json:"stopped,omitempty"`
}

// recoverBeat is RecoverPage's heartbeat: a retry resumes the page rather than
// read it again and redeliver twice what failed again.
type recoverBeat struct {
	RecoverPageResult
	// Page holds the page's deliveries and the attempts each had when read.
	Page []store.AttemptsSeen `json:"page,omitempty"`
	// Signalled counts the deliveries of Page signalled so far.
	Signalled int `json:"signalled"`
	// WaitUntil is set once, so a resumed wait keeps its deadline.
	WaitUntil *time.Time `json:"waitUntil,omitempty"`
}

// errNoRedeliverer: the worker has no Temporal wiring; retries will not help.
var errNoRedeliverer = errors.New("recovery: the worker has no Redeliver function")

// RecoverPage redelivers one page of a subscription's failed deliveries,
// oldest first, then waits until they are made. Each signal names its attempt,
// so a retry may signal the page again. Waiting here keeps one page at most
// outstanding, and the recovery's history one activity per page.
func (a *Activities) RecoverPage(ctx context.Context, in *RecoverPageInput) (*RecoverPageResult, error) {
	if a.Redeliver == nil {
		return nil, errNoRedeliverer
	}
	beat := &recoverBeat{RecoverPageResult: RecoverPageResult{Cursor: in.After}}
	if activity.HasHeartbeatDetails(ctx) {
		var hb recoverBeat
		if err := activity.GetHeartbeatDetails(ctx, &hb); err == nil {
			beat = &hb
		}
	}
	sub, err := a.Store.Webhooks().Get(ctx, in.WorkspaceID, in.SubscriptionID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		beat.Stopped = models.RecoveryStopDeleted
		return &beat.RecoverPageResult, nil
	case err != nil:
		return nil, err
	case !sub.Enabled:
		beat.Stopped = models.RecoveryStopDisabled
		return &beat.RecoverPageResult, nil
	}
	// Resumed: the rest of the heartbeated page, read again by id.
	var events []models.Event
	if beat.Page == nil {
		failed, err := a.Store.Deliveries().FailedPage(ctx, in.WorkspaceID, in.SubscriptionID, in.Since, in.Until, in.After, in.PageSize)
		if err != nil {
			return nil, err
		}
		beat.Page = make([]store.AttemptsSeen, len(failed))
		for i, f := range failed {
			events = append(events, f.Event)
			beat.Page[i] = store.AttemptsSeen{EventID: f.ID, Attempts: f.Attempts}
		}
		beat.Found, beat.Done = len(failed), len(failed) < in.PageSize
		if n := len(failed); n > 0 {
			beat.Cursor = &RecoverCursor{EventDateCreated: failed[n-1].DateCreated, EventID: failed[n-1].ID}
		}
		activity.RecordHeartbeat(ctx, beat)
	} else {
		for _, s := range beat.Page[beat.Signalled:] {
			ev, err := a.Store.Events().Get(ctx, s.EventID)
			switch {
			case errors.Is(err, models.ErrNotFound):
				ev = models.Event{ID: s.EventID} // gone: Redeliver is skipped below
			case err != nil:
				return nil, err
			}
			events = append(events, ev)
		}
	}
	for _, ev := range events {
		seen := beat.Page[beat.Signalled]
		if ev.WorkspaceID != uuid.Nil { // uuid.Nil: the event expired meanwhile
			switch err := a.Redeliver(ctx, ev, in.SubscriptionID, in.RequestID, seen.Attempts+1); {
			case err == nil:
				beat.Redelivered++
			case errors.Is(err, models.ErrNotFound):
				// The event is gone: nothing to redeliver.
			default:
				return nil, fmt.Errorf("redeliver event %s: %w", ev.ID, err)
			}
		}
		beat.Signalled++
		activity.RecordHeartbeat(ctx, beat)
	}
	if err := a.awaitRedeliveries(ctx, in.SubscriptionID, beat); err != nil {
		return nil, err
	}
	// Disabled or deleted meanwhile: the later redeliveries were skipped.
	switch sub, err := a.Store.Webhooks().Get(ctx, in.WorkspaceID, in.SubscriptionID); {
	case errors.Is(err, models.ErrNotFound):
		beat.Stopped = models.RecoveryStopDeleted
	case err != nil:
		return nil, err
	case !sub.Enabled:
		beat.Stopped = models.RecoveryStopDisabled
	}
	return &beat.RecoverPageResult, nil
}

// awaitRedeliveries waits until every delivery of the page had an attempt
// since read, or until WaitUntil, by the real clock: it bounds a real wait.
func (a *Activities) awaitRedeliveries(ctx context.Context, subscriptionID uuid.UUID, beat *recoverBeat) error {
	if len(beat.Page) == 0 {
		return nil
	}
	if beat.WaitUntil == nil {
		until := time.Now().Add(RecoverPageWait)
		beat.WaitUntil = &until
		activity.RecordHeartbeat(ctx, beat)
	}
	for {
		n, err := a.Store.Deliveries().Unattempted(ctx, subscriptionID, beat.Page)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if !time.Now().Before(*beat.WaitUntil) {
			a.Log.Warn("recovery goes on with redeliveries not made yet", "subscriptionId", subscriptionID.String(),
				"waiting", n, "waited", RecoverPageWait.String())
			return nil
		}
		activity.RecordHeartbeat(ctx, beat)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(recoverPoll):
		}
	}
}

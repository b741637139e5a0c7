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
// Temporal client and task queue. attempt, when not 0, is the attempt
// number asked for: the workflow drops the signal once that attempt is
// made or asked for (workflows.Redelivery.Attempt).
type Redeliverer func(ctx context.Context, ev models.Event, subscriptionID uuid.UUID, requestID string, attempt int) error

// RecoverPageWait bounds how long a page waits for its redeliveries to be
// made before the recovery goes on: a receiver that takes longer (slow,
// rate-limited, pausing with Retry-After) still sees the recovery progress,
// one page per RecoverPageWait at most.
const RecoverPageWait = 5 * time.Minute

// recoverPoll is how often a page's wait reads whether its redeliveries
// were made (one indexed statement).
const recoverPoll = time.Second

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

// RecoverPageResult is what a page did.
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

// recoverBeat is RecoverPage's heartbeat: the page as first read and how
// far the attempt got, so that a retried attempt works on the same page
// rather than reading it again (the deliveries it redelivered and that
// failed again would be read with one attempt more, and redelivered
// again).
type recoverBeat struct {
	RecoverPageResult
	// Page: the page's failed deliveries and the attempts each had when
	// read (nil until read). Each redelivery names the attempt after
	// those, and the wait is for these.
	Page []store.AttemptsSeen `json:"page,omitempty"`
	// Signalled: how many of Page were signalled.
	Signalled int `json:"signalled"`
	// WaitUntil: when the wait for the page's redeliveries gives up; set
	// once all are signalled, so a resumed wait keeps its first deadline.
	WaitUntil *time.Time `json:"waitUntil,omitempty"`
}

// errNoRedeliverer: the worker was built without Temporal wiring; retrying
// cannot help, but the activity's retry policy bounds it.
var errNoRedeliverer = errors.New("recovery: the worker has no Redeliver function")

// RecoverPage redelivers one page of a subscription's failed deliveries,
// oldest event first, then waits until those redeliveries are made.
//
// Redelivering: each failed delivery gets one redelivery signal to its
// event's delivery workflow, which makes the attempt (numbered after the
// earlier ones, same webhook-id). The signal names that attempt (the
// attempts read, plus one), so the workflow drops it once the attempt is
// made or asked for: signalling an event twice is harmless. That is what
// makes a retry safe. The page and the attempts read are heartbeated
// before the first signal (an attempt's first heartbeat is sent at once;
// later ones the SDK batches, up to 0.8 of the heartbeat timeout), and the
// progress after each signal, so a retry (the worker died, Temporal
// refused a signal) signals the rest of the same page, again from the last
// progress the server got, with the same attempt numbers.
//
// Waiting: a recovery of a large backlog would otherwise start thousands
// of delivery runs at once against one subscription whose attempts in
// flight are capped (WEBHOOK_MAX_IN_FLIGHT), each polling its send limits
// until a slot frees. So the page returns only once every redelivery it
// asked for is made (the delivery's attempts passed the ones read), the
// subscription is disabled or deleted, or RecoverPageWait has passed:
// at most one page of a recovery's redeliveries is outstanding. The wait
// is here, polling one statement a second and heartbeating, rather than
// in the workflow, so that the recovery's history stays one activity per
// page and a resumed wait keeps its deadline (heartbeated).
//
// The subscription is read first: disabled or deleted, the page stops
// (Stopped) and nothing is signalled. A redelivery that fails again, the
// receiver still down, leaves its delivery failed; a later recovery finds
// it again.
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
	// The events to signal: the page just read, or, resumed, the rest of
	// the page heartbeated (read again by id: the heartbeat holds ids).
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
	// Disabled or deleted during the page (a redelivery's failure may
	// disable it): the redeliveries signalled after that were skipped, so
	// the recovery stops and says why rather than report them made.
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

// awaitRedeliveries waits, heartbeating, until every delivery of the page
// has had an attempt since it was read, or until the wait's deadline.
// It uses the real clock (not a.now): it bounds a real wait.
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

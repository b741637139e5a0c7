package activities

import (
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// The delivery state's next attempt is the later of the schedule's wait
// and the receiver's Retry-After, bounded by the schedule's longest wait
// (an hour when the workflow passed none); whether a retry follows decides
// pending or failed.
func TestRecordOptionsStatusAndNextAttempt(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Activities{Now: func() time.Time { return now }}
	failed := sent{label: labelHTTPError, status: 503}
	for _, c := range []struct {
		name       string
		in         AttemptInput
		out        sent
		retryAfter time.Duration
		status     models.DeliveryStatus
		next       time.Duration // 0: none
		exhausts   bool
	}{
		{"success", AttemptInput{NextAttemptIn: Duration(time.Minute)}, sent{label: labelSuccess}, 0, models.DeliverySucceeded, 0, false},
		{"schedule's wait", AttemptInput{NextAttemptIn: Duration(time.Minute), MaxWait: Duration(time.Hour)}, failed, 0, models.DeliveryPending, time.Minute, false},
		{"shorter Retry-After", AttemptInput{NextAttemptIn: Duration(time.Minute), MaxWait: Duration(time.Hour)}, failed, 30 * time.Second, models.DeliveryPending, time.Minute, false},
		{"longer Retry-After", AttemptInput{NextAttemptIn: Duration(time.Minute), MaxWait: Duration(time.Hour)}, failed, 10 * time.Minute, models.DeliveryPending, 10 * time.Minute, false},
		{"Retry-After past the longest wait", AttemptInput{NextAttemptIn: Duration(time.Minute), MaxWait: Duration(30 * time.Minute)}, failed, 5 * time.Hour, models.DeliveryPending, 30 * time.Minute, false},
		{"no MaxWait: an hour", AttemptInput{NextAttemptIn: Duration(time.Minute)}, failed, 5 * time.Hour, models.DeliveryPending, time.Hour, false},
		{"final", AttemptInput{Final: true}, failed, 0, models.DeliveryFailed, 0, true},
		{"manual, nothing scheduled", AttemptInput{Manual: true}, failed, 0, models.DeliveryFailed, 0, false},
		{"manual before a scheduled attempt", AttemptInput{Manual: true, NextAttemptIn: Duration(time.Minute)}, failed, 0, models.DeliveryPending, time.Minute, false},
		{"final manual", AttemptInput{Manual: true, Final: true}, failed, 0, models.DeliveryFailed, 0, false},
		{"410 on the final attempt", AttemptInput{Final: true}, sent{label: labelGone, status: 410}, 0, models.DeliveryFailed, 0, false},
		{"410 with retries left", AttemptInput{NextAttemptIn: Duration(time.Minute)}, sent{label: labelGone, status: 410}, 0, models.DeliveryFailed, 0, false},
		// A wait of 0s in the schedule: a retry follows, with no date.
		{"zero wait", AttemptInput{}, failed, 0, models.DeliveryPending, 0, false},
	} {
		opts := a.recordOptions(&c.in, models.Event{Type: models.EventTestCreated}, c.out.label, c.retryAfter)
		var next time.Duration
		if opts.NextAttemptAt != nil {
			next = opts.NextAttemptAt.Sub(now)
		}
		if opts.Status != c.status || next != c.next || opts.Exhausts != c.exhausts || !opts.Now.Equal(now) {
			t.Errorf("%s: status %s, next in %v, exhausts %v; want %s, %v, %v", c.name, opts.Status, next, opts.Exhausts, c.status, c.next, c.exhausts)
		}
	}
	if opts := a.recordOptions(&AttemptInput{}, models.Event{Type: models.EventWebhookDisabled}, failed.label, 0); !opts.Operational {
		t.Error("an operational event is not marked so")
	}
}

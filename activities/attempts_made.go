package activities

import (
	"context"

	"github.com/google/uuid"
)

// AttemptsMadeInput names one event's delivery to one subscription.
type AttemptsMadeInput struct {
	EventID        uuid.UUID `json:"eventId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// AttemptsMadeResult is the highest attempt number recorded (there are no gaps).
type AttemptsMadeResult struct {
	Attempts int `json:"attempts"`
}

// AttemptsMade reads how many attempts are recorded, so that a redelivery's
// run numbers its attempts after them.
func (a *Activities) AttemptsMade(ctx context.Context, in *AttemptsMadeInput) (*AttemptsMadeResult, error) {
	n, err := a.Store.Deliveries().AttemptsMade(ctx, in.SubscriptionID, in.EventID)
	if err != nil {
		return nil, err
	}
	return &AttemptsMadeResult{Attempts: n}, nil
}

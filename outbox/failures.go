package outbox

import (
	"context"
	"errors"
	"log/slog"

	"go.temporal.io/api/serviceerror"
)

// temporalDown reports a failed call that does not say the change itself
// is at fault: Temporal unreachable, overloaded, too slow, refusing this
// client (permissions, a namespace gone) or failing inside. Every other
// call would fail alike, so the batch stops, the relay waits for its next
// round, and no change is charged with it: after an outage or a fixed
// misconfiguration the backlog goes at once, not after 5 minutes of
// backoff. Only Temporal refusing the call's input (InvalidArgument), or
// the client failing to build it (an error that is no service error), is
// the change's own.
func temporalDown(err error) bool {
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		return false
	}
	var service serviceerror.ServiceError
	return errors.As(err, &service) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) || errors.Is(err, errNoTemporal)
}

// failed holds back a change whose call failed for itself until its retry
// time, counts it and logs it once, by id and failure count: the error says
// what Temporal refused, and nothing of the change's contents is logged.
func (r Relay[T]) failed(ctx context.Context, c T, sendErr error) error {
	if r.OnFailed != nil {
		r.OnFailed()
	}
	f, err := r.Queue.Failed(ctx, c)
	if err != nil {
		return err // not recorded: the change keeps its lease, so waits that long
	}
	if f.Failures == 0 {
		return nil // done or gone meanwhile: nothing held back
	}
	r.logger().Warn("outbox: Temporal refused a change; retrying it later",
		slog.String("id", f.ID.String()), slog.Int("failures", f.Failures),
		slog.Time("retryAt", f.RetryAt), slog.Any("error", sendErr))
	return nil
}

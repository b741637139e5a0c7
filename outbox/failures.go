package outbox

import (
	"context"
	"errors"
	"log/slog"

	"go.temporal.io/api/serviceerror"
)

// temporalDown reports a failed call that says Temporal itself is the
// trouble (unreachable, overloaded, too slow), not the change: every other
// call would fail alike, so the batch stops, the relay waits for its next
// round, and no change is charged with it. ResourceExhausted is among them:
// a rate limit refuses the next calls too.
func temporalDown(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		namespace   *serviceerror.NamespaceUnavailable
		deadline    *serviceerror.DeadlineExceeded
		exhausted   *serviceerror.ResourceExhausted
	)
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errNoTemporal) ||
		errors.As(err, &unavailable) || errors.As(err, &namespace) ||
		errors.As(err, &deadline) || errors.As(err, &exhausted)
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
	r.logger().Warn("outbox: Temporal refused a change; retrying it later",
		slog.String("id", f.ID.String()), slog.Int("failures", f.Failures),
		slog.Time("retryAt", f.RetryAt), slog.Any("error", sendErr))
	return nil
}

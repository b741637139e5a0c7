package worker

import (
	"context"
	"log/slog"
	"time"
)

// keepTrying calls ensure until it succeeds or ctx ends, backing off to a
// minute: what a worker sets up in Temporal must not stop it from starting.
func keepTrying(ctx context.Context, log *slog.Logger, what string, ensure func(context.Context) error, attrs ...any) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wait := time.Second
	for {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := ensure(actx)
		cancel()
		if err == nil {
			log.Info(what+" in place", attrs...)
			return
		}
		if ctx.Err() != nil {
			return
		}
		log.Warn(what+": retrying", append(attrs, slog.Any("error", err), slog.Duration("in", wait))...)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

package activities

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// customHeaders opens the subscription's custom headers as read with this
// attempt's snapshot, so a change applies from the next attempt and no value
// enters a workflow's input or history. A sensitive value no key opens fails
// like an unopenable signing secret: retryable, before anything is sent, the
// error and the log naming the header but never a value.
func (a *Activities) customHeaders(ctx context.Context, t models.WebhookTarget, eventID uuid.UUID) (http.Header, error) {
	out := make(http.Header, len(t.Headers))
	for _, h := range t.Headers {
		if !h.Sensitive {
			out.Set(h.Name, h.Value)
			continue
		}
		if a.WebhookSecrets == nil {
			return nil, secret.ErrNoKey
		}
		plain, err := a.WebhookSecrets.Open(h.Sealed, secret.WebhookHeaderBinding(t.ID, h.Name))
		if err != nil {
			a.Metrics.undecryptableSecret()
			a.log().LogAttrs(ctx, slog.LevelError, "webhook sensitive header cannot be opened; the attempt will be retried, possibly on another worker",
				slog.String("subscriptionId", t.ID.String()),
				slog.String("eventId", eventID.String()),
				slog.String("header", h.Name),
				slog.Int("keys", a.WebhookSecrets.Keys()))
			return nil, temporal.NewApplicationError("cannot open the subscription's sensitive header "+h.Name+
				": no key of WEBHOOK_SECRET_KEY opens it (does this worker's WEBHOOK_SECRET_KEY hold the key the API sealed it with?)",
				ErrUndecryptableSecret)
		}
		out.Set(h.Name, string(plain))
	}
	return out, nil
}

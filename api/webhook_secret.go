package api

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// rotateWebhookSecretRequest is the optional body of a secret rotation:
// a grace period in whole hours or whole seconds, not both.
type rotateWebhookSecretRequest struct {
	GracePeriodHours   *float64 `json:"gracePeriodHours"`
	GracePeriodSeconds *float64 `json:"gracePeriodSeconds"`
}

func (req rotateWebhookSecretRequest) validate() (time.Duration, error) {
	var v models.Validation
	grace := models.WebhookSecretGraceDefault
	switch {
	case req.GracePeriodHours != nil && req.GracePeriodSeconds != nil:
		v.Add("gracePeriodSeconds", "send either gracePeriodHours or gracePeriodSeconds, not both")
	case req.GracePeriodHours != nil:
		grace = time.Duration(graceUnits(*req.GracePeriodHours, "gracePeriodHours", time.Hour, &v)) * time.Hour
	case req.GracePeriodSeconds != nil:
		grace = time.Duration(graceUnits(*req.GracePeriodSeconds, "gracePeriodSeconds", time.Second, &v)) * time.Second
	}
	return grace, v.Err()
}

// graceUnits checks a whole number of units up to the maximum grace period.
func graceUnits(x float64, field string, unit time.Duration, v *models.Validation) int64 {
	hi := int64(models.WebhookSecretGraceMax / unit)
	if x < 0 || x > float64(hi) || x != math.Trunc(x) {
		v.Add(field, "must be a whole number from 0 to "+strconv.FormatInt(hi, 10)+
			" (the grace period is at most 7 days; 0 stops the old secret at once)")
		return 0
	}
	return int64(x)
}

var errNoSecretKeyToRotate = &models.Error{
	Kind: models.ErrUnavailable, Code: "webhook_secrets_unavailable",
	Message: "signing secrets cannot be rotated: the server has no WEBHOOK_SECRET_KEY to encrypt them with",
}

// rotateWebhookSecret gives the subscription a new signing secret, shown
// only in this response. Until the grace period ends deliveries are signed
// with both secrets, so a receiver can switch at any moment; a rotation
// during a grace period stops the oldest secret at once.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req rotateWebhookSecretRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	grace, err := req.validate()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.secrets == nil {
		s.writeError(w, r, errNoSecretKeyToRotate)
		return
	}
	whsec, err := secret.NewWebhookSecret()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Bound to the subscription id, like the secret made at creation.
	sealed, err := s.secrets.Seal([]byte(whsec), id[:])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ws := principal(r).WorkspaceID
	expires, err := s.storeFor(r).Webhooks().RotateSecret(r.Context(), ws, id, sealed, grace)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	onCommit(r, func() { s.outbox.Poke(store.OutboxWebhookSecrets) })
	writeSecret(w, http.StatusOK, models.WebhookSecretRotated{Secret: whsec, PreviousSecretExpiresAt: expires})
}

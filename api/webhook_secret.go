package api

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// rotateWebhookSecretRequest is the optional body of a secret rotation.
// The grace period is whole hours or, for short ones (and tests), whole
// seconds; never both.
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

// graceUnits checks a grace period given in unit: a whole number from 0 to
// the maximum grace period.
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
// only in this response. Until the grace period ends every delivery is
// signed with both secrets, so a receiver can switch at any moment of it
// without losing one. A rotation during a grace period replaces the
// previous secret: the one before it stops at once.
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
	expires, err := s.store.Webhooks().RotateSecret(r.Context(), ws, id, sealed, grace)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.startSecretTimer(r, ws, id)
	writeSecret(w, http.StatusOK, models.WebhookSecretRotated{Secret: whsec, PreviousSecretExpiresAt: expires})
}

// secretWorkflowTimeout bounds the Temporal call a rotation makes.
const secretWorkflowTimeout = 5 * time.Second

// startSecretTimer signals the subscription's secret workflow (starting
// it if none runs), whose durable timer erases the previous secret when
// the grace period ends; every rotation shows in its history.
//
// It never fails the request. The rotation is committed and the database
// is the truth: deliveries stop signing with the old secret at its expiry
// whether or not the workflow runs, and the worker's daily retention run
// erases an expired secret the workflow missed. Hence a warning.
func (s *Server) startSecretTimer(r *http.Request, workspaceID, subscriptionID uuid.UUID) {
	requestID := requestIDFrom(r.Context())
	log := s.log.With(
		slog.String("requestId", requestID),
		slog.String("workspaceId", workspaceID.String()),
		slog.String("subscriptionId", subscriptionID.String()))
	if s.temporal == nil {
		log.WarnContext(r.Context(), "webhook secret workflow not started: no Temporal client; the retention run erases the previous secret after its grace period")
		return
	}
	// The rotation is committed: finish telling the workflow even if the
	// client hangs up now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), secretWorkflowTimeout)
	defer cancel()
	bare, err := workflows.SignalWithStartWebhookSecret(ctx, s.temporal, workspaceID, subscriptionID, s.cfg.TaskQueue,
		workflows.WebhookSecretRotation{RequestID: requestID})
	switch {
	case err != nil:
		log.WarnContext(ctx, "webhook secret workflow not signalled; the rotation stands, deliveries stop signing with the old secret at its expiry, and the retention run erases it",
			slog.Any("error", err))
	case bare:
		log.WarnContext(ctx, "webhook secret workflow started without search attributes: the namespace does not define them")
	}
}

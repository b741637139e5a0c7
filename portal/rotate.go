package portal

import (
	"net/http"
	"strconv"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// rotateView is the page that confirms a rotation.
type rotateView struct {
	Sub models.WebhookSubscription
	// PreviousExpiresAt is set while an earlier rotation's previous secret
	// still signs: rotating again stops it at once.
	PreviousExpiresAt *time.Time
	GraceLeft         string
}

// confirmRotate asks before rotating, with the grace period to choose and,
// when an earlier rotation's grace period runs, what rotating again ends.
func (p *Portal) confirmRotate(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	target, err := p.store.Webhooks().Target(r.Context(), sub.ID)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	v := rotateView{Sub: sub}
	if at := target.PreviousSecretExpiresAt; at != nil && at.After(p.now()) {
		v.PreviousExpiresAt, v.GraceLeft = at, inWords(at.Sub(p.now()))
	}
	p.pages.render(w, r, http.StatusOK, "rotate", view{Title: "Rotate the signing secret", Data: v})
}

// rotateSecret gives the endpoint a new signing secret with the grace
// period chosen (webhookops.Ops.RotateSecret) and leads to the page that
// shows it once. Its one-time token keeps a second click from rotating
// again, which would stop the secret the receiver still verifies with.
func (p *Portal) rotateSecret(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	var hours *float64
	if raw := r.PostForm.Get("gracePeriodHours"); raw != "" {
		h, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			p.fail(w, r, models.Invalid("gracePeriodHours", "must be a whole number of hours"))
			return
		}
		hours = &h
	}
	grace, err := webhookops.GracePeriod(hours, nil)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	rotated, err := p.ops.RotateSecret(r.Context(), p.store, sessionOf(r).WorkspaceID, sub.ID, grace)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.outbox.Poke(store.OutboxWebhookSecrets)
	if rotated.Secret == "" {
		// v1a: nothing secret to show once; the endpoint page shows the new public key.
		redirect(w, "/portal/endpoints/"+sub.ID.String())
		return
	}
	p.stashSecret(w, r, sub.ID, stashRotated, rotated.Secret)
	redirect(w, "/portal/endpoints/"+sub.ID.String()+"/rotated")
}

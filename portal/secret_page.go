package portal

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// A new signing secret is shown on the page a form redirects to, not in
// the form's answer, so that reloading it or replaying the form shows it
// no more. The form stashes it in PostgreSQL (any API replica may serve the
// page), sealed with the WEBHOOK_SECRET_KEY ring and bound to the session
// and the endpoint; the page deletes it as it reads it.

// stashTTL is how long a stashed secret waits for its page, which the
// browser loads at once.
const stashTTL = 5 * time.Minute

// secretView is the page of a new signing secret; Secret is "" once shown.
type secretView struct {
	EndpointID uuid.UUID
	Secret     string
	Intro      string
	Created    bool
	// PreviousExpiresAt is when the previous secret stops signing, and
	// GraceLeft how long that is from now, in words.
	PreviousExpiresAt *time.Time
	GraceLeft         string
}

// stashAD binds a stashed secret to its session, its endpoint and the page
// it is for ("created" or "rotated"), so neither page shows, or spends, the
// other's secret.
func stashAD(sessionID, subscriptionID uuid.UUID, page string) []byte {
	return append(append([]byte("portal stash v2\x00"+page+"\x00"), sessionID[:]...), subscriptionID[:]...)
}

// stashSecret keeps whsec for the session's next read of the endpoint's
// secret page. A failure is logged, not shown: the work is done, and the
// page then tells how to get a new secret.
func (p *Portal) stashSecret(w http.ResponseWriter, r *http.Request, subID uuid.UUID, page, whsec string) {
	ctx, s := r.Context(), sessionOf(r)
	err := errors.New("no WEBHOOK_SECRET_KEY")
	if p.ops.Secrets != nil {
		var sealed []byte
		if sealed, err = p.ops.Secrets.Seal([]byte(whsec), stashAD(s.ID, subID, page)); err == nil {
			err = p.store.PortalForms().Stash(ctx, s.ID, subID, sealed, p.now().Add(stashTTL))
		}
	}
	if err != nil {
		p.log.ErrorContext(ctx, "portal: a new signing secret could not be stashed for its page",
			slog.String("requestId", w.Header().Get("X-Request-Id")), slog.Any("error", err))
	}
}

// takeSecret reads and deletes the secret stashed for page; "" when there
// is none, or the one stashed is the other page's (left for it).
func (p *Portal) takeSecret(r *http.Request, subID uuid.UUID, page string) (string, error) {
	s, forms := sessionOf(r), p.store.PortalForms()
	sealed, err := forms.PeekStash(r.Context(), s.ID, subID, p.now())
	if errors.Is(err, models.ErrNotFound) || p.ops.Secrets == nil {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	plain, err := p.ops.Secrets.Open(sealed, stashAD(s.ID, subID, page))
	if err != nil {
		return "", nil // sealed for the other page
	}
	if took, err := forms.TakeStashed(r.Context(), s.ID, subID, sealed); err != nil || !took {
		return "", err
	}
	return string(plain), nil
}

// The pages a stashed secret is for.
const (
	stashCreated = "created"
	stashRotated = "rotated"
)

// showCreated is where creating an endpoint leads.
func (p *Portal) showCreated(w http.ResponseWriter, r *http.Request) {
	p.showSecret(w, r, "Endpoint created", secretView{Created: true,
		Intro: "The endpoint was created. Copy its signing secret now: it is shown only once."})
}

// showRotated is where rotating a signing secret leads.
func (p *Portal) showRotated(w http.ResponseWriter, r *http.Request) {
	p.showSecret(w, r, "Signing secret rotated", secretView{
		Intro: "The endpoint has a new signing secret. Copy it now: it is shown only once."})
}

func (p *Portal) showSecret(w http.ResponseWriter, r *http.Request, title string, v secretView) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	v.EndpointID = sub.ID
	page := stashRotated
	if v.Created {
		page = stashCreated
	}
	if v.Secret, err = p.takeSecret(r, sub.ID, page); err != nil {
		p.fail(w, r, err)
		return
	}
	if !v.Created {
		target, err := p.store.Webhooks().Target(r.Context(), sub.ID)
		if err != nil {
			p.fail(w, r, err)
			return
		}
		if at := target.PreviousSecretExpiresAt; at != nil && at.After(p.now()) {
			v.PreviousExpiresAt, v.GraceLeft = at, inWords(at.Sub(p.now()))
		}
	}
	p.pages.render(w, r, http.StatusOK, "secret", view{Title: title, Data: v})
}

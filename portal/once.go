package portal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Every form carries a one-time token (the field "once", new on each page
// rendered) besides its CSRF token. The first submission of a token to a
// form's address claims it in PostgreSQL (store.PortalForms), so every API
// replica sees it, and records where its answer redirected; a replay
// (reload, double-click, back-button resubmit) is sent there and does
// nothing. A submission that changed nothing (a form shown again with its
// errors, an error page) gives its token back, so it may be sent again.
const onceField = "once"

const (
	// formWorkTimeout bounds a form's work, which goes on when the browser
	// leaves (a double-click abandons the first request): the claim is
	// settled either way, so its replay has an answer. It stays below the
	// store's claim lease (15 s), after which a replay takes a claim over.
	formWorkTimeout = 10 * time.Second
	// replayWait is how long a replay waits for its first submission.
	replayWait = 8 * time.Second
)

// newFormToken is a page's one-time form token: 144 random bits.
func newFormToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// formTokenHash binds a token to the form's address, so the one token of a
// page names one submission of each of its forms.
func formTokenHash(path, token string) []byte {
	h := sha256.New()
	h.Write([]byte("portal form v1\x00" + path + "\x00" + token))
	return h.Sum(nil)
}

// form guards a state-changing form: CSRF, a writable session, and its
// one-time token.
func (p *Portal) form(h http.HandlerFunc) http.Handler {
	return p.change(p.once(h))
}

// once does a form's work at most once per token (see onceField).
func (p *Portal) once(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := r.PostForm.Get(onceField)
		if len(token) < 16 || len(token) > 64 {
			p.message(w, r, http.StatusForbidden, "Form refused",
				"The form comes from an older page of the portal. Go back, reload the page and try again.")
			return
		}
		s, forms := sessionOf(r), p.store.PortalForms()
		hash := formTokenHash(r.URL.Path, token)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), formWorkTimeout)
		defer cancel()
		deadline := time.Now().Add(replayWait)
		for {
			c, err := forms.Claim(ctx, s.ID, hash, p.now())
			switch {
			case err != nil:
				p.fail(w, r, err)
				return
			case c.Claimed:
				p.settleOnce(ctx, forms, w, r.WithContext(ctx), hash, c, h)
				return
			case c.Location != "":
				redirect(w, c.Location)
				return
			case time.Now().After(deadline):
				p.message(w, r, http.StatusConflict, "Still working",
					"This form was sent twice and the first is still being worked on. Go back to the page and reload it in a few seconds to see its result.")
				return
			}
			select {
			case <-ctx.Done():
				p.fail(w, r, ctx.Err())
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// settleOnce runs the claimed form's handler and, before its answer goes
// out, records a redirect for replays or gives the token back. A claim
// lost meanwhile (a replay took it over after its lease: the work ran
// longer than formWorkTimeout allows, or the hosts' clocks disagree) may
// mean the work ran twice: the answer then says so, with a link to this
// submission's result, rather than passing for the only one.
func (p *Portal) settleOnce(ctx context.Context, forms store.PortalForms, w http.ResponseWriter, r *http.Request, hash []byte, c store.FormClaim, h http.HandlerFunc) {
	s := sessionOf(r)
	sw := &settlingWriter{ResponseWriter: w}
	sw.settle = func(status int) bool {
		var err error
		if status == http.StatusSeeOther {
			err = forms.Complete(ctx, s.ID, hash, c.ClaimedAt, w.Header().Get("Location"))
		} else {
			err = forms.Release(ctx, s.ID, hash, c.ClaimedAt)
		}
		switch {
		case errors.Is(err, store.ErrFormClaimLost) && status == http.StatusSeeOther:
			p.log.WarnContext(ctx, "portal form token taken over while its work ran: the work may have run twice",
				slog.String("requestId", w.Header().Get("X-Request-Id")))
			p.claimLost(w, r, w.Header().Get("Location"))
			return false
		case errors.Is(err, store.ErrFormClaimLost): // this one changed nothing
		case err != nil: // a replay waits, then takes the claim over after its lease
			p.log.WarnContext(ctx, "portal form token not settled", slog.String("requestId", w.Header().Get("X-Request-Id")), slog.Any("error", err))
		}
		return true
	}
	h(sw, r)
	if !sw.settled {
		sw.WriteHeader(http.StatusOK)
	}
}

// claimLost answers a form whose work was done while a replay took its
// token over: the change may have been made twice, and the person is told
// so and led to this submission's result.
func (p *Portal) claimLost(w http.ResponseWriter, r *http.Request, location string) {
	w.Header().Del("Location")
	p.pages.render(w, r, http.StatusConflict, "message", view{Title: "Sent twice",
		Message: "This form was sent again while it was still being worked on, and the second went ahead too: " +
			"the change may have been made twice. Check the result.",
		Back: location, BackText: "See the result"})
}

// settlingWriter calls settle once, with the status, before it is written;
// when settle answered itself (false), the handler's answer is dropped.
type settlingWriter struct {
	http.ResponseWriter
	settle           func(status int) (keep bool)
	settled, dropped bool
}

func (w *settlingWriter) WriteHeader(status int) {
	if w.settled {
		if !w.dropped {
			w.ResponseWriter.WriteHeader(status)
		}
		return
	}
	w.settled = true
	if !w.settle(status) {
		w.dropped = true
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *settlingWriter) Write(b []byte) (int, error) {
	if !w.settled {
		w.WriteHeader(http.StatusOK)
	}
	if w.dropped {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the API's writer.
func (w *settlingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

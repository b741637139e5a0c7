package portal

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// sinceLayout is how the recover form writes a time: ISO 8601, 24-hour,
// UTC, as every time on the pages (a datetime-local input would show the
// browser's locale, a 12-hour clock in the US).
const sinceLayout = "2006-01-02 15:04"

// recoverCountLimit bounds the count a confirmation shows.
const recoverCountLimit = 10000

// recoverView is the page that confirms a recovery.
type recoverView struct {
	Sub   models.WebhookSubscription
	Since string
	From  time.Time
	// Failed is how many deliveries the recovery attempts again; More says
	// there are more than recoverCountLimit.
	Failed int
	More   bool
}

// parseUTC reads a time as the pages write it (sinceLayout), with seconds,
// a T or an offset tolerated; without an offset it is UTC. Only years 1 to
// 9999 once in UTC: an offset can carry year 0000 into year -1, which
// PostgreSQL refuses (a 500 for a filter).
func parseUTC(raw string) (time.Time, bool) {
	for _, layout := range []string{sinceLayout, "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, raw, time.UTC); err == nil {
			t = t.UTC()
			return t, t.Year() >= 1 && t.Year() <= 9999
		}
	}
	return time.Time{}, false
}

// readSince reads the recover form's time as UTC, with messages in the
// form's words: the shared rule (webhookops.RecoverWindow) speaks the API's.
func (p *Portal) readSince(raw string) (time.Time, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return time.Time{}, models.Invalid("since", "enter the date and time to start from, such as "+p.now().UTC().Add(-24*time.Hour).Format(sinceLayout)+" (UTC)")
	}
	since, ok := parseUTC(raw)
	now, retention := p.now().UTC(), p.cfg.DeliveryRetention
	switch {
	case !ok:
		return time.Time{}, models.Invalid("since", "write the time as year-month-day hours:minutes, 24-hour, in UTC, such as "+now.Add(-24*time.Hour).Format(sinceLayout))
	case since.After(now):
		return time.Time{}, models.Invalid("since", "this time is in the future; choose one in the past")
	case since.Before(now.Add(-retention)):
		return time.Time{}, models.Invalid("since", "deliveries are kept for "+inWords(retention)+", so the earliest time to recover from is "+
			now.Add(-retention).Add(time.Minute).Truncate(time.Minute).Format(sinceLayout)+" UTC")
	}
	return since, nil
}

// confirmRecover says how many failed deliveries a recovery from the time
// chosen would attempt again, and asks before starting it.
func (p *Portal) confirmRecover(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	v := recoverView{Sub: sub, Since: r.URL.Query().Get("since")}
	if !sub.Enabled {
		p.pages.render(w, r, http.StatusOK, "recover", view{Title: "Recover failed deliveries", Data: v})
		return
	}
	from, err := p.readSince(v.Since)
	if err != nil {
		var (
			me   *models.Error
			errs []models.FieldError
		)
		if errors.As(err, &me) {
			errs = me.Details
		}
		p.pages.render(w, r, http.StatusBadRequest, "recover", view{Title: "Recover failed deliveries", Errors: errs, Data: v})
		return
	}
	v.From, v.Since = from, from.Format(sinceLayout)
	if v.Failed, err = p.store.Deliveries().FailedCount(r.Context(), sessionOf(r).WorkspaceID, sub.ID, from, p.now(), recoverCountLimit+1); err != nil {
		p.fail(w, r, err)
		return
	}
	if v.Failed > recoverCountLimit {
		v.Failed, v.More = recoverCountLimit, true
	}
	p.pages.render(w, r, http.StatusOK, "recover", view{Title: "Recover failed deliveries", Data: v})
}

// recoverFailed starts a recovery of the endpoint's failed deliveries since
// the time chosen (read as UTC) until now.
func (p *Portal) recoverFailed(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	from, err := p.readSince(r.PostForm.Get("since"))
	if err != nil {
		p.fail(w, r, err)
		return
	}
	now := p.now().UTC()
	since := from.Format(time.RFC3339)
	from, until, err := webhookops.RecoverWindow(&since, nil, now, p.cfg.DeliveryRetention)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	if _, err := p.ops.Recover(r.Context(), sessionOf(r).WorkspaceID, sub.ID, from, until, now, "portal:"+w.Header().Get("X-Request-Id")); err != nil {
		p.fail(w, r, err)
		return
	}
	redirect(w, "/portal/endpoints/"+sub.ID.String()+"?notice=recover")
}

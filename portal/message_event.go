package portal

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/models"
)

// payloadShown caps the payload a page shows: an event's data may be large,
// and the page is for reading, not for copying megabytes.
const payloadShown = 64 << 10

// attemptsShown bounds the attempts listed per endpoint; the retry
// schedule makes a few dozen at most, redeliveries aside.
const attemptsShown = 100

// messageView is one event's page: its body as sent, and per recipient
// the endpoint, its custom headers and every attempt.
type messageView struct {
	Event models.EventDetail
	// Payload is the body pretty-printed, cut to payloadShown (Cut).
	Payload string
	Cut     bool
	Size    int
	Sent    []sentTo
	// UserAgent is the User-Agent header of every attempt.
	UserAgent string
}

// sentTo is one recipient of the event with its attempts. Headers are the
// endpoint's custom headers as they are now, sensitive values masked by
// the store: what an attempt sent is not recorded.
type sentTo struct {
	Recipient models.EventRecipient
	Sub       models.WebhookSubscription
	Attempts  models.Page[models.WebhookDelivery]
}

// showMessage shows one event of the workspace; another workspace's is
// not found, as in the API.
func (p *Portal) showMessage(w http.ResponseWriter, r *http.Request) {
	ws := sessionOf(r).WorkspaceID
	id, ok := parseID(mux.Vars(r)["eventId"])
	if !ok {
		p.fail(w, r, models.NotFound("event"))
		return
	}
	ev, err := p.store.Events().Detail(r.Context(), ws, id)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	body, err := models.DeliveryBody(ev.Type, ev.DateCreated, ev.Data)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	v := messageView{Event: ev, Size: len(body), UserAgent: activities.UserAgent}
	v.Payload, v.Cut = pretty(body)
	for _, rc := range ev.Recipients {
		sub, err := p.store.Webhooks().Get(r.Context(), ws, rc.SubscriptionID)
		if errors.Is(err, models.ErrNotFound) {
			continue // deleted since the recipients were read
		}
		if err != nil {
			p.fail(w, r, err)
			return
		}
		attempts, err := p.store.Deliveries().ListFiltered(r.Context(), ws, sub.ID, models.DeliveryFilter{EventID: &ev.ID},
			models.PageRequest{Page: 1, PerPage: attemptsShown})
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			p.fail(w, r, err)
			return
		}
		v.Sent = append(v.Sent, sentTo{Recipient: rc, Sub: sub, Attempts: attempts})
	}
	p.pages.render(w, r, http.StatusOK, "message_event", view{Title: "Message " + ev.ID.String(), Data: v})
}

// pretty indents a JSON body for reading and cuts it to payloadShown at a
// character boundary; cut says it was cut. A body whose indented form
// would pass indentedMax is shown as sent: indentation grows with the
// square of the nesting depth (a 20 KB event nested 10,000 deep is about
// 200 MB indented, which each page view built before cutting it).
func pretty(body []byte) (text string, cut bool) {
	var buf bytes.Buffer
	if indentedWithin(body, indentedMax) {
		if err := json.Indent(&buf, body, "", "  "); err != nil {
			buf.Reset()
		}
	}
	if buf.Len() == 0 {
		buf.Write(body)
	}
	out := buf.Bytes()
	if len(out) <= payloadShown {
		return string(out), false
	}
	out = out[:payloadShown]
	for i := 0; i < utf8.UTFMax && !utf8.Valid(out); i++ {
		out = out[:len(out)-1]
	}
	return string(out), true
}

// indentedMax bounds the indented text pretty builds: four times what it
// shows.
const indentedMax = 4 * payloadShown

// indentedWithin reports whether json.Indent's output for body, two spaces
// a level, stays within max bytes, counting an upper bound in one pass
// that stops as soon as it passes max: each opening bracket and comma
// adds a line break and the next line's indentation, each closing bracket
// one at its own depth.
func indentedWithin(body []byte, max int) bool {
	size, depth, inString, escaped := len(body), 0, false, false
	for _, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			size += 1 + 2*depth
		case c == '}' || c == ']':
			depth--
			size += 1 + 2*depth
		case c == ',':
			size += 1 + 2*depth
		case c == ':':
			size++
		}
		if size > max {
			return false
		}
	}
	return true
}

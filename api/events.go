package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/openlayer-ai/workspace-service/eventtypes"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

type publishEventRequest struct {
	Type *string         `json:"type"`
	Data json.RawMessage `json:"data"`
}

func (req publishEventRequest) validate(p models.Principal) (models.NewEvent, error) {
	var v models.Validation
	in := models.NewEvent{WorkspaceID: p.WorkspaceID}
	switch {
	case req.Type == nil:
		v.Add("type", "is required: one of "+models.PublishableEventTypeList())
	case models.EventType(*req.Type).Operational():
		v.Add("type", "webhook.* events are the service's own and cannot be published; use one of "+models.PublishableEventTypeList())
	case !models.EventType(*req.Type).Valid():
		v.Add("type", "must be one of "+models.PublishableEventTypeList())
	default:
		in.Type = models.EventType(*req.Type)
	}
	data := bytes.TrimSpace(req.Data)
	switch {
	case len(data) == 0:
		v.Add("data", "is required: a JSON object")
	case data[0] != '{':
		v.Add("data", "must be a JSON object")
	case len(data) > models.EventDataMax:
		v.Add("data", "must be at most 262144 bytes (256 KiB) of JSON")
	default:
		switch hasNUL, size := inspectJSON(data); {
		case hasNUL:
			v.Add("data", "must not contain the character \\u0000 (PostgreSQL jsonb cannot store it)")
		case size > models.EventDataMax:
			v.Add("data", "must be at most 262144 bytes (256 KiB) of JSON with its numbers written out in full, as receivers get it (1e1000 is 1001 digits)")
		default:
			in.Data = data
		}
	}
	if in.Type != "" && in.Data != nil {
		// The catalogue's schema of the type: the same one GET
		// /v1/event-types and the OpenAPI document's webhooks describe.
		if typ, ok := eventtypes.Lookup(in.Type); ok {
			for _, p := range typ.Check(in.Data) {
				v.Add(p.Field, p.Message+" (schema "+p.Keyword+")")
			}
		}
	}
	return in, v.Err()
}

// publishEvent stores an event and answers 202: the row is its own outbox
// entry, so Temporal is never on the publish path and publishing keeps
// working while Temporal is away.
func (s *Server) publishEvent(w http.ResponseWriter, r *http.Request) {
	var req publishEventRequest
	if err := decode(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	in, err := req.validate(principal(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in.Trace = tracing.FromContext(r.Context())
	ev, err := s.storeFor(r).Events().Create(r.Context(), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	tagEvent(r.Context(), ev.ID.String())
	onCommit(r, func() {
		s.metrics.eventAccepted(ev.Type)
		if ev.DispatchedAt == nil {
			s.outbox.Poke(store.OutboxEvents)
		}
	})
	writeJSON(w, http.StatusAccepted, models.EventAccepted{ID: ev.ID})
}

// inspectJSON reports whether a string or key holds U+0000, which jsonb
// cannot store, and the size once jsonb writes numbers out in full, as
// receivers get it (1e100000 is 100,001 digits).
func inspectJSON(raw []byte) (hasNUL bool, size int) {
	size = len(raw)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return hasNUL, size
		}
		switch t := tok.(type) {
		case string:
			hasNUL = hasNUL || strings.ContainsRune(t, 0)
		case json.Number:
			size += exponentDigits(string(t))
		}
	}
}

// exponentDigits is how many digits writing n's exponent out adds, about.
func exponentDigits(n string) int {
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return 0
	}
	exp, err := strconv.Atoi(n[i+1:])
	if err != nil || exp > math.MaxInt32 || exp < -math.MaxInt32 {
		return math.MaxInt32 // an exponent no number can be written out with
	}
	if exp < 0 {
		exp = -exp
	}
	return exp
}

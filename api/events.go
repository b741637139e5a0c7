package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/outbox"
	"github.com/openlayer-ai/workspace-service/models"
)

// eventStartTimeout bounds the workflow start a publish makes before it
// answers; a healthy Temporal takes milliseconds, and an event whose start
// times out is started by the worker's outbox sweeper instead.
const eventStartTimeout = 2 * time.Second

type publishEventRequest struct {
	Type *string         `json:"type"`
	Data json.RawMessage `json:"data"`
}

func (req publishEventRequest) validate(p models.Principal) (models.NewEvent, error) {
	var v models.Validation
	in := models.NewEvent{WorkspaceID: p.WorkspaceID}
	switch {
	case req.Type == nil:
		v.Add("type", "is required: one of "+models.EventTypeList())
	case !models.EventType(*req.Type).Valid():
		v.Add("type", "must be one of "+models.EventTypeList())
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
	return in, v.Err()
}

// publishEvent stores an event and starts its delivery. It answers 202 as
// soon as the event is stored: the row is its own outbox entry, so when
// the workflow cannot be started now (Temporal unreachable) the worker's
// sweeper starts it later, and the event is not lost either way.
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
	ev, err := s.store.Events().Create(r.Context(), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d := outbox.Dispatcher{
		Temporal: s.temporal, Store: s.store, TaskQueue: s.cfg.TaskQueue,
		Schedule: s.cfg.WebhookRetrySchedule, Log: s.log,
	}
	// The event is committed: finish starting it even if the client hangs up.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), eventStartTimeout)
	defer cancel()
	s.metrics.eventAccepted(ev.Type)
	if err := d.Start(ctx, ev); err != nil {
		s.log.WarnContext(ctx, "delivery workflow not started; the outbox sweeper will start it",
			slog.String("requestId", requestIDFrom(r.Context())),
			slog.String("eventId", ev.ID.String()), slog.Any("error", err))
	}
	writeJSON(w, http.StatusAccepted, models.EventAccepted{ID: ev.ID})
}

// inspectJSON walks valid JSON once and reports whether a string (or key)
// holds U+0000, which jsonb cannot store, and the size the JSON reaches once
// jsonb writes its numbers out in full, as receivers get it: 1e100000 is
// six bytes as sent and 100,001 digits as delivered.
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

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
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
	case jsonHasNUL(data):
		v.Add("data", "must not contain the character \\u0000 (PostgreSQL jsonb cannot store it)")
	default:
		in.Data = data
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
	if err := d.Start(ctx, ev.ID); err != nil {
		s.log.WarnContext(ctx, "delivery workflow not started; the outbox sweeper will start it",
			slog.String("requestId", requestIDFrom(r.Context())),
			slog.String("eventId", ev.ID.String()), slog.Any("error", err))
	}
	writeJSON(w, http.StatusAccepted, models.EventAccepted{ID: ev.ID})
}

// jsonHasNUL reports whether a string (or key) in valid JSON holds U+0000,
// which jsonb cannot store. Only JSON with a \u0000 escape is decoded.
func jsonHasNUL(raw []byte) bool {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return true // cannot happen for decoded JSON; refuse rather than store
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return true
		}
	}
}

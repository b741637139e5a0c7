package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/models"
)

// headerEntry is one custom header in the headers column: a plain value,
// or a sensitive one sealed (base64 in JSON).
type headerEntry struct {
	Name   string `json:"name"`
	Value  string `json:"value,omitempty"`
	Sealed []byte `json:"sealed,omitempty"`
}

// storedHeaders is the jsonb headers column.
type storedHeaders []headerEntry

// Value writes the column; nil is the empty array, as the default.
func (h storedHeaders) Value() (driver.Value, error) {
	if h == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]headerEntry(h))
	return string(b), err
}

// Scan reads the column, or NULL from an outer join as no headers.
func (h *storedHeaders) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*h = nil
		return nil
	case []byte:
		return json.Unmarshal(v, (*[]headerEntry)(h))
	case string:
		return json.Unmarshal([]byte(v), (*[]headerEntry)(h))
	default:
		return fmt.Errorf("store: headers column of type %T", src)
	}
}

func storedHeadersOf(hs []models.WebhookHeader) storedHeaders {
	out := make(storedHeaders, len(hs))
	for i, h := range hs {
		out[i] = headerEntry{Name: h.Name, Value: h.Value}
		if h.Sensitive {
			out[i] = headerEntry{Name: h.Name, Sealed: h.Sealed}
		}
	}
	return out
}

// headers is the column as models headers, sensitive values still sealed.
func (h storedHeaders) headers() []models.WebhookHeader {
	out := make([]models.WebhookHeader, len(h))
	for i, e := range h {
		out[i] = models.WebhookHeader{Name: e.Name, Value: e.Value, Sensitive: e.Sealed != nil, Sealed: e.Sealed}
	}
	return out
}

// mergeKept resolves an update's masked values: each Keep header takes the
// sealed value stored under the same name (case-insensitively, as it was
// sealed), under the name as now sent.
func mergeKept(stored storedHeaders, update []models.WebhookHeader) (storedHeaders, error) {
	var v models.Validation
	out := storedHeadersOf(update)
	for i, h := range update {
		if !h.Keep {
			continue
		}
		found := false
		for _, s := range stored {
			if s.Sealed != nil && strings.EqualFold(s.Name, h.Name) {
				out[i], found = headerEntry{Name: h.Name, Sealed: s.Sealed}, true
				break
			}
		}
		if !found {
			v.Add("headers."+h.Name, "is the mask shown for a sensitive value, and this subscription has no sensitive header of that name to keep; send the value")
		}
	}
	return out, v.Err()
}

// replaceHeaders reads the subscription's url and headers within tx, the
// row locked so a concurrent update cannot slip a value between read and
// write, refuses a move of a sensitive value to another host, and returns
// the headers u sets (nil when it sets none).
func replaceHeaders(ctx context.Context, tx bun.Tx, workspaceID, id uuid.UUID, u models.WebhookUpdate) (storedHeaders, error) {
	var row struct {
		URL     string        `bun:"url"`
		Headers storedHeaders `bun:"headers"`
	}
	err := tx.NewRaw(`SELECT url, headers FROM webhook_subscriptions WHERE id = ? AND workspace_id = ? FOR NO KEY UPDATE`,
		id, workspaceID).Scan(ctx, &row)
	if err != nil {
		return nil, err
	}
	if err := keepSensitiveAtOrigin(row.URL, u, row.Headers); err != nil {
		return nil, err
	}
	if u.Headers == nil {
		return nil, nil
	}
	return mergeKept(row.Headers, u.Headers)
}

// ResealHeaders passes each sealed value of a headers column as read (raw)
// through reseal, for `admin reseal-webhook-secrets`, and returns the column
// to write back when any changed; the format stays this file's business.
func ResealHeaders(raw []byte, reseal func(name string, sealed []byte) ([]byte, bool, error)) ([]byte, bool, error) {
	var hs storedHeaders
	if err := hs.Scan(raw); err != nil {
		return nil, false, err
	}
	changed := false
	for i, h := range hs {
		if h.Sealed == nil {
			continue
		}
		out, ok, err := reseal(h.Name, h.Sealed)
		if err != nil {
			return nil, false, err
		}
		if ok {
			hs[i].Sealed, changed = out, true
		}
	}
	if !changed {
		return raw, false, nil
	}
	b, err := json.Marshal([]headerEntry(hs))
	return b, true, err
}

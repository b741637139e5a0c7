package api

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// FuzzDecodeObject feeds arbitrary bytes to the body decoder with every
// request type: it never panics, and it either decodes or answers a models
// error (a 400 in the error shape), never anything else.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"name":"a","name":"b"}`, `{"url":1}`, `{"expiresAt":"2030-01-01T00:00:00"}`,
		`{"gracePeriodSeconds":-0}`, `{"data":{"a":[[[[[]]]]]}}`, "{\"type\":\"\xff\"}", `{"eventTypes":null}`,
		`{"headers":{"a":"b","a":1}}`, `{"headers":[]}`, `{"headers":{"":""},"sensitiveHeaders":[null]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, dst := range []any{
			&createAPIKeyRequest{}, &updateAPIKeyRequest{}, &rotateAPIKeyRequest{},
			&createWebhookRequest{}, &updateWebhookRequest{}, &publishEventRequest{}, &createProjectRequest{},
		} {
			if err := decodeObject(body, dst); err != nil {
				var me *models.Error
				if !errors.As(err, &me) || !errors.Is(err, models.ErrInvalid) {
					t.Fatalf("decodeObject(%q, %T): %v is not a validation error", body, dst, err)
				}
			}
		}
	})
}

// FuzzBearerToken: any Authorization header value parses without panic,
// and a token it returns is non-empty and has no surrounding space.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer olk_abc", "bearer  x ", "Basic Zm9v", "", "Bearer", "Bearer \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := bearerToken(h)
		if ok && (tok == "" || strings.TrimSpace(tok) != tok) {
			t.Fatalf("bearerToken(%q) = %q", h, tok)
		}
	})
}

// FuzzQueryParams: any query string yields a page request inside its
// bounds, or validation errors, never a panic.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"page=1&perPage=25", "page=-1", "perPage=1e9", "page=%zz", "page=1&page=2", "name=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest("GET", "/v1/projects", nil)
		r.URL.RawQuery = raw
		var v models.Validation
		q := query(r, &v)
		p := pageParams(q, &v)
		if v.Err() == nil && (p.Page < 1 || p.PerPage < 1) {
			t.Fatalf("query %q: page %+v accepted", raw, p)
		}
		_ = url.Values(q)
	})
}

package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// contract checks exchanges with the API against api/openapi.json with
// kin-openapi: each request against its operation's parameters, security
// and body schema, each response against the operation's response for its
// status (an undocumented status fails), headers included. A request the
// API refuses for breaking a rule the document can express must break the
// document too, so the document is as strict as the code, not looser.
type contract struct {
	doc    *openapi3.T
	router routers.Router
	// seen counts exchanges per "METHOD /path" operation and status.
	seen map[string]map[int]int
}

func newContract(t *testing.T) *contract {
	t.Helper()
	// kin-openapi asserts the formats it knows; uuid is not among them.
	openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(uuidPattern))
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("api/openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.json is not valid: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &contract{doc: doc, router: router, seen: map[string]map[int]int{}}
}

const uuidPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

// bearer is the check of the bearer scheme: one Authorization header with
// a token. Whether the key is valid is the API's business (a 401 the
// document lists), not the document's.
func bearer(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecurityScheme.Type != "http" || in.SecurityScheme.Scheme != "bearer" {
		return fmt.Errorf("unexpected security scheme %s %s", in.SecurityScheme.Type, in.SecurityScheme.Scheme)
	}
	values := in.RequestValidationInput.Request.Header.Values("Authorization")
	if len(values) != 1 || !strings.HasPrefix(values[0], "Bearer ") || strings.TrimSpace(values[0][len("Bearer "):]) == "" {
		return errors.New("no Authorization: Bearer <token> header")
	}
	return nil
}

// exchange is one request of the contract run and what must come of it.
type exchange struct {
	name   string
	method string
	url    string
	key    string // the bearer token; "" sends none
	body   any    // as for request(): nil, a string, []byte, or JSON
	header []string
	status int
	// bad: the API refuses the request for a reason the document states,
	// so the document must refuse it too.
	bad bool
}

// do sends x to srv and validates the exchange; it returns the response.
func (c *contract) do(t *testing.T, srv http.Handler, x exchange) *httptest.ResponseRecorder {
	t.Helper()
	req := request(t, x.method, x.url, x.key, x.body, x.header...)
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	check := req.Clone(context.Background())
	check.Body = io.NopCloser(bytes.NewReader(body))

	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	name := x.name + ": " + x.method + " " + x.url
	if rec.Code != x.status {
		t.Errorf("%s: status %d, want %d; body %s", name, rec.Code, x.status, truncate(rec.Body.String()))
	}

	route, params, err := c.router.FindRoute(check)
	if err != nil {
		// No operation: only an unknown route (404) or method (405), in
		// the error shape.
		c.unrouted(t, name, rec, err)
		return rec
	}
	op := route.Method + " " + route.Path
	if c.seen[op] == nil {
		c.seen[op] = map[int]int{}
	}
	c.seen[op][rec.Code]++

	in := &openapi3filter.RequestValidationInput{
		Request: check, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: bearer, MultiError: true},
	}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	switch {
	case x.bad && reqErr == nil:
		t.Errorf("%s (operation %s): the API refuses this request with %d, but the document accepts it", name, op, rec.Code)
	case !x.bad && reqErr != nil:
		t.Errorf("%s (operation %s): the request does not match the document: %v", name, op, reqErr)
	}

	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s (operation %s): the %d response does not match the document: %v\nbody: %s", name, op, rec.Code, err, truncate(rec.Body.String()))
	}
	// kin-openapi lets a body through where the document promises none.
	if resp := route.Operation.Responses.Status(rec.Code); resp != nil && len(resp.Value.Content) == 0 && rec.Body.Len() > 0 {
		t.Errorf("%s (operation %s): the document gives the %d response no body, the API sent %q", name, op, rec.Code, truncate(rec.Body.String()))
	}
	return rec
}

// unrouted checks an exchange the document has no operation for: the API
// must answer 404 or 405 in the error shape, as the document's
// description says of any path.
func (c *contract) unrouted(t *testing.T, name string, rec *httptest.ResponseRecorder, routeErr error) {
	t.Helper()
	want, code := http.StatusNotFound, "not_found"
	if errors.Is(routeErr, routers.ErrMethodNotAllowed) {
		want, code = http.StatusMethodNotAllowed, "method_not_allowed"
	}
	if rec.Code != want {
		t.Errorf("%s: no operation (%v), and the API answered %d, want %d", name, routeErr, rec.Code, want)
	}
	if c.seen["(no operation)"] == nil {
		c.seen["(no operation)"] = map[int]int{}
	}
	c.seen["(no operation)"][rec.Code]++
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Errorf("%s: body is not JSON: %v", name, err)
		return
	}
	schema := c.doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		t.Errorf("%s: the %d body is not the document's Error: %v", name, rec.Code, err)
	}
	if got := v.(map[string]any)["error"].(map[string]any)["code"]; got != code {
		t.Errorf("%s: code %v, want %s", name, got, code)
	}
}

// runAll sends every exchange in order.
func (c *contract) runAll(t *testing.T, srv http.Handler, xs []exchange) {
	t.Helper()
	for _, x := range xs {
		c.do(t, srv, x)
	}
}

func truncate(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

func decodeInto(t *testing.T, rec *httptest.ResponseRecorder, out any) {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		t.Fatalf("decode %q: %v", truncate(rec.Body.String()), err)
	}
}

// TestOpenAPIContract drives every endpoint through the real router on a
// real PostgreSQL, with happy paths and the errors each can reach (400,
// 401, 403, 404, 405, 409, 413, 415, 422, 429, 503), and validates every
// request and response against api/openapi.json. Every operation of the
// document must have been exercised with a success.
func TestOpenAPIContract(t *testing.T) {
	c := newContract(t)
	h := newHarness(t, withWebhookKey, noRateLimits, func(d *api.Deps) {
		d.Config.MaxProjectsPerWorkspace = 3
		d.Config.WebhookMaxSubscriptions = 3
	})
	srv := h.srv
	admin := h.admin.Secret
	ws := "/v1/workspaces/" + h.admin.WorkspaceID.String()
	keys, hooks, events := ws+"/api-keys", ws+"/webhooks", ws+"/events"
	nobody := uuid.NewString()
	future := time.Now().Add(48 * time.Hour).UTC()
	idem := func(k string) []string { return []string{"Idempotency-Key", k} }

	// Outside /v1, and this document.
	c.runAll(t, srv, []exchange{
		{name: "liveness", method: "GET", url: "/healthz", status: 200},
		{name: "readiness", method: "GET", url: "/readyz", status: 200},
		{name: "metrics", method: "GET", url: "/metrics", status: 200},
		{name: "the document", method: "GET", url: "/v1/openapi.json", status: 200},
		{name: "unknown path", method: "GET", url: "/v1/nope", key: admin, status: 404},
		{name: "unknown root path", method: "GET", url: "/nope", status: 404},
		{name: "wrong method", method: "PATCH", url: "/v1/projects", key: admin, status: 405},
		{name: "trailing slash", method: "GET", url: "/v1/projects/", key: admin, status: 404},
	})

	// Projects.
	var alpha models.Project
	decodeInto(t, c.do(t, srv, exchange{name: "create", method: "POST", url: "/v1/projects", key: admin,
		body: map[string]any{"name": "alpha", "taskType": "llm-base", "description": "first"}, status: 201}), &alpha)
	betaBody := `{"name":"beta","taskType":"tabular-regression","description":null}`
	c.runAll(t, srv, []exchange{
		{name: "create with Idempotency-Key", method: "POST", url: "/v1/projects", key: admin, body: betaBody, header: idem("p-1"), status: 201},
		{name: "replay", method: "POST", url: "/v1/projects", key: admin, body: betaBody, header: idem("p-1"), status: 201},
		{name: "same key, other body", method: "POST", url: "/v1/projects", key: admin, body: `{"name":"other","taskType":"llm-base"}`, header: idem("p-1"), status: 422},
		{name: "name taken", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "ALPHA", "taskType": "llm-base"}, status: 409},
		{name: "name taken, stored and replayed", method: "POST", url: "/v1/projects", key: admin, body: `{"name":"Alpha","taskType":"llm-base"}`, header: idem("p-2"), status: 409},
		{name: "name taken, replayed", method: "POST", url: "/v1/projects", key: admin, body: `{"name":"Alpha","taskType":"llm-base"}`, header: idem("p-2"), status: 409},
		{name: "third", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "gamma", "taskType": "text-classification"}, status: 201},
		{name: "over the cap", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "delta", "taskType": "llm-base"}, status: 409},
		{name: "name with inner Unicode spaces (over the cap)", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "\u00a0d\u3000e", "taskType": "llm-base"}, status: 409},
		{name: "name with NUL", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "a\x00b", "taskType": "llm-base"}, status: 400, bad: true},
		{name: "name of Unicode spaces only", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "\u00a0\u3000\u2028", "taskType": "llm-base"}, status: 400, bad: true},
		{name: "description with NUL", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "x", "taskType": "llm-base", "description": "a\x00"}, status: 400, bad: true},
		{name: "blank name, unknown task type", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "", "taskType": "nope"}, status: 400, bad: true},
		{name: "blank name of spaces", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"name": "   ", "taskType": "llm-base"}, status: 400, bad: true},
		{name: "name missing", method: "POST", url: "/v1/projects", key: admin, body: map[string]any{"taskType": "llm-base"}, status: 400, bad: true},
		{name: "unknown member", method: "POST", url: "/v1/projects", key: admin, body: `{"name":"x","taskType":"llm-base","extra":1}`, status: 400, bad: true},
		{name: "malformed JSON", method: "POST", url: "/v1/projects", key: admin, body: `{"name":`, status: 400, bad: true},
		{name: "null body", method: "POST", url: "/v1/projects", key: admin, body: `null`, status: 400, bad: true},
		{name: "no body", method: "POST", url: "/v1/projects", key: admin, status: 400, bad: true},
		{name: "not JSON", method: "POST", url: "/v1/projects", key: admin, body: "name=x", header: []string{"Content-Type", "text/plain"}, status: 415, bad: true},
		{name: "over 1 MiB", method: "POST", url: "/v1/projects", key: admin, body: `{"name":"` + strings.Repeat("a", 1<<20) + `","taskType":"llm-base"}`, status: 413, bad: true},
		{name: "bad Idempotency-Key", method: "POST", url: "/v1/projects", key: admin, body: betaBody, header: idem(" padded "), status: 400, bad: true},
		{name: "list", method: "GET", url: "/v1/projects", key: admin, status: 200},
		{name: "list filtered", method: "GET", url: "/v1/projects?page=2&perPage=1&name=a&taskType=llm-base", key: admin, status: 200},
		{name: "page past the end", method: "GET", url: "/v1/projects?page=99", key: admin, status: 200},
		{name: "perPage over 100", method: "GET", url: "/v1/projects?perPage=101", key: admin, status: 400, bad: true},
		{name: "page 0", method: "GET", url: "/v1/projects?page=0", key: admin, status: 400, bad: true},
		{name: "unknown task type", method: "GET", url: "/v1/projects?taskType=nope", key: admin, status: 400, bad: true},
		{name: "empty taskType and name", method: "GET", url: "/v1/projects?taskType=&name=", key: admin, status: 200},
		{name: "name filter with NUL", method: "GET", url: "/v1/projects?name=a%00", key: admin, status: 400, bad: true},
		{name: "no key", method: "GET", url: "/v1/projects", status: 401, bad: true},
		{name: "not a bearer", method: "GET", url: "/v1/projects", header: []string{"Authorization", "Basic eDp5"}, status: 401, bad: true},
		{name: "unknown key", method: "GET", url: "/v1/projects", key: "olk_" + strings.Repeat("x", 40), status: 401},
		{name: "delete absent", method: "DELETE", url: "/v1/projects/" + nobody, key: admin, status: 404},
		{name: "delete malformed id", method: "DELETE", url: "/v1/projects/not-a-uuid", key: admin, status: 404, bad: true},
	})
	// A project from the web app, with a connected repository.
	h.exec(`UPDATE projects SET source = 'web', git_repo = ?::jsonb WHERE id = ?`, `{"id":"`+uuid.NewString()+`","gitId":7,
		"dateConnected":"2026-11-01T10:00:00Z","dateUpdated":"2026-11-02T10:00:00Z","branch":"main","name":"repo","private":true,
		"slug":"acme/repo","url":"https://github.com/acme/repo","rootDir":"/","projectId":"`+alpha.ID.String()+`","gitAccountId":"`+uuid.NewString()+`"}`, alpha.ID)
	c.runAll(t, srv, []exchange{
		{name: "list with a repository", method: "GET", url: "/v1/projects?name=alpha", key: admin, status: 200},
		{name: "delete", method: "DELETE", url: "/v1/projects/" + alpha.ID.String(), key: admin, status: 204},
		{name: "delete again", method: "DELETE", url: "/v1/projects/" + alpha.ID.String(), key: admin, status: 404},
	})

	// API keys.
	var ci models.APIKey
	ciBody := map[string]any{"name": "ci", "expiresAt": future.Format(time.RFC3339)}
	decodeInto(t, c.do(t, srv, exchange{name: "create", method: "POST", url: keys, key: admin, body: ciBody, status: 201}), &ci)
	key := keys + "/" + ci.ID.String()
	c.runAll(t, srv, []exchange{
		{name: "create with Idempotency-Key", method: "POST", url: keys, key: admin, body: `{"name":"once"}`, header: idem("k-1"), status: 201},
		{name: "replay", method: "POST", url: keys, key: admin, body: `{"name":"once"}`, header: idem("k-1"), status: 201},
		{name: "create without a body", method: "POST", url: keys, key: admin, status: 201},
		{name: "create with null", method: "POST", url: keys, key: admin, body: `null`, status: 201},
		{name: "create with {}", method: "POST", url: keys, key: admin, body: `{}`, status: 201},
		{name: "create, naive expiry", method: "POST", url: keys, key: admin, body: map[string]any{"name": nil, "expiresAt": future.Format("2006-01-02T15:04:05.000000")}, status: 201},
		{name: "create, never expires", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": nil}, status: 201},
		{name: "name over 120", method: "POST", url: keys, key: admin, body: map[string]any{"name": strings.Repeat("n", 121)}, status: 400, bad: true},
		{name: "expiry in the past", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": "2020-01-01T00:00:00Z"}, status: 400},
		{name: "a date alone", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": "2030-01-01"}, status: 400, bad: true},
		{name: "name with NUL", method: "POST", url: keys, key: admin, body: map[string]any{"name": "ci\x00"}, status: 400, bad: true},
		{name: "expiry in month 13", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": "2030-13-01T00:00:00Z"}, status: 400, bad: true},
		{name: "expiry on April 31", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": "2030-04-31T00:00:00"}, status: 400, bad: true},
		{name: "expiry at hour 24", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": "2030-01-01T24:00:00Z"}, status: 400, bad: true},
		{name: "expiry on February 29 of a common year (the description's rule)", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": "2031-02-29T00:00:00Z"}, status: 400},
		{name: "create, expiry with an offset and a fraction", method: "POST", url: keys, key: admin, body: map[string]any{"expiresAt": future.In(time.FixedZone("", -(5*3600 + 30*60))).Format("2006-01-02T15:04:05.000-07:00")}, status: 201},
		{name: "read-only member", method: "POST", url: keys, key: admin, body: map[string]any{"status": "active"}, status: 400, bad: true},
		{name: "other workspace", method: "POST", url: "/v1/workspaces/" + nobody + "/api-keys", key: admin, body: `{}`, status: 404},
		{name: "malformed workspace", method: "GET", url: "/v1/workspaces/nope/api-keys", key: admin, status: 404, bad: true},
		{name: "list", method: "GET", url: keys, key: admin, status: 200},
		{name: "retrieve", method: "GET", url: key, key: admin, status: 200},
		{name: "retrieve, upper case id", method: "GET", url: keys + "/" + strings.ToUpper(ci.ID.String()), key: admin, status: 200},
		{name: "retrieve absent", method: "GET", url: keys + "/" + nobody, key: admin, status: 404},
		{name: "retrieve malformed id", method: "GET", url: keys + "/nope", key: admin, status: 404, bad: true},
		{name: "rename", method: "PUT", url: key, key: admin, body: map[string]any{"name": "deploy"}, status: 200},
		{name: "rename with {}", method: "PUT", url: key, key: admin, body: `{}`, status: 200},
		{name: "rename to a name with NUL", method: "PUT", url: key, key: admin, body: map[string]any{"name": "\x00"}, status: 400, bad: true},
		{name: "update without a body", method: "PUT", url: key, key: admin, status: 200},
		{name: "remove the name", method: "PUT", url: key, key: admin, body: `{"name":null}`, status: 200},
		{name: "update expiresAt", method: "PUT", url: key, key: admin, body: `{"expiresAt":null}`, status: 400, bad: true},
		{name: "update, not JSON", method: "PUT", url: key, key: admin, body: "x", header: []string{"Content-Type", "text/plain"}, status: 415, bad: true},
		{name: "update absent", method: "PUT", url: keys + "/" + nobody, key: admin, body: `{}`, status: 404},
		{name: "rotate, no body", method: "POST", url: key + "/rotate", key: admin, status: 200},
		{name: "rotate, seconds", method: "POST", url: key + "/rotate", key: admin, body: map[string]any{"gracePeriodSeconds": 90}, status: 200},
		{name: "rotate, both grace fields", method: "POST", url: key + "/rotate", key: admin, body: map[string]any{"gracePeriodHours": 1, "gracePeriodSeconds": 1}, status: 400, bad: true},
		{name: "rotate, both grace fields, one null", method: "POST", url: key + "/rotate", key: admin, body: `{"gracePeriodHours":null,"gracePeriodSeconds":5}`, status: 200},
		{name: "rotate, over 30 days", method: "POST", url: key + "/rotate", key: admin, body: map[string]any{"gracePeriodHours": 721}, status: 400, bad: true},
		{name: "rotate, fractional", method: "POST", url: key + "/rotate", key: admin, body: `{"gracePeriodHours":1.5}`, status: 400, bad: true},
		{name: "rotate absent", method: "POST", url: keys + "/" + nobody + "/rotate", key: admin, status: 404},
		{name: "rotate, expiry in month 13", method: "POST", url: key + "/rotate", key: admin, body: map[string]any{"expiresAt": "2030-13-01T00:00:00Z"}, status: 400, bad: true},
	})
	// The previous secret of a rotated key: it authenticates, but cannot
	// manage keys, nor be handed a secret its successor obtained.
	var rotated models.APIKey
	decodeInto(t, c.do(t, srv, exchange{name: "rotate with grace", method: "POST", url: key + "/rotate", key: admin,
		body: map[string]any{"gracePeriodHours": 1, "expiresAt": future.Format(time.RFC3339)}, header: idem("r-1"), status: 200}), &rotated)
	current := rotated.Secret
	var again models.APIKey
	decodeInto(t, c.do(t, srv, exchange{name: "rotate again", method: "POST", url: key + "/rotate", key: current,
		body: map[string]any{"gracePeriodHours": 1}, status: 200}), &again)
	previous, current := current, again.Secret
	hookBody := `{"url":"https://hooks.example.com/reuse","eventTypes":["test.created"]}`
	c.runAll(t, srv, []exchange{
		{name: "rotate, replayed", method: "POST", url: key + "/rotate", key: admin, body: map[string]any{"gracePeriodHours": 1, "expiresAt": future.Format(time.RFC3339)}, header: idem("r-1"), status: 200},
		{name: "previous secret creates", method: "POST", url: keys, key: previous, body: `{}`, status: 403},
		{name: "previous secret renames", method: "PUT", url: key, key: previous, body: `{"name":"x"}`, status: 403},
		{name: "previous secret revokes", method: "DELETE", url: key, key: previous, status: 403},
		{name: "previous secret rotates", method: "POST", url: key + "/rotate", key: previous, status: 403},
		{name: "previous secret reads", method: "GET", url: key, key: previous, status: 200},
		{name: "current secret creates a webhook", method: "POST", url: hooks, key: current, body: hookBody, header: idem("w-reuse"), status: 201},
		{name: "previous secret replays it", method: "POST", url: hooks, key: previous, body: hookBody, header: idem("w-reuse"), status: 409},
	})
	h.exec(`UPDATE api_keys SET expires_at = now() - interval '1 minute', previous_secret_hash = NULL, previous_key_expires_at = NULL WHERE id = ?`, ci.ID)
	c.runAll(t, srv, []exchange{
		{name: "rotate an expired key", method: "POST", url: key + "/rotate", key: admin, body: `{}`, status: 409},
		{name: "expired key authenticates nothing", method: "GET", url: keys, key: current, status: 401},
		{name: "revoke", method: "DELETE", url: key, key: admin, status: 204},
		{name: "revoke again", method: "DELETE", url: key, key: admin, status: 404},
	})

	// Webhooks and events.
	member := h.addKey(models.RoleMember).Secret
	var hook models.WebhookCreated
	decodeInto(t, c.do(t, srv, exchange{name: "create", method: "POST", url: hooks, key: admin,
		body: map[string]any{"url": "https://hooks.example.com/a", "eventTypes": []string{"test.created", "tests.result.updated"}, "description": "CI", "enabled": nil}, status: 201}), &hook)
	one := hooks + "/" + hook.ID.String()
	evBody := `{"type":"test.created","data":{"testId":"9f1c","status":"failing"}}`
	c.runAll(t, srv, []exchange{
		{name: "create with Idempotency-Key", method: "POST", url: hooks, key: admin, body: `{"url":"https://hooks.example.com/b","eventTypes":["test.deleted"],"enabled":false}`, header: idem("w-1"), status: 201},
		{name: "replay", method: "POST", url: hooks, key: admin, body: `{"url":"https://hooks.example.com/b","eventTypes":["test.deleted"],"enabled":false}`, header: idem("w-1"), status: 201},
		{name: "over the cap", method: "POST", url: hooks, key: admin, body: `{"url":"https://hooks.example.com/c","eventTypes":["test.deleted"]}`, status: 409},
		{name: "http URL, no event types", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "http://hooks.example.com", "eventTypes": []string{}}, status: 400, bad: true},
		{name: "duplicate event type", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/d", "eventTypes": []string{"test.created", "test.created"}}, status: 400, bad: true},
		{name: "unknown event type", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/d", "eventTypes": []string{"nope"}}, status: 400, bad: true},
		{name: "internal address", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://127.0.0.1/x", "eventTypes": []string{"test.created"}}, status: 400},
		{name: "description with NUL", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/d", "eventTypes": []string{"test.created"}, "description": "a\x00"}, status: 400, bad: true},
		{name: "url with credentials", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://user:pw@hooks.example.com/d", "eventTypes": []string{"test.created"}}, status: 400, bad: true},
		{name: "url without a host", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https:///d", "eventTypes": []string{"test.created"}}, status: 400, bad: true},
		{name: "url on a well-known port", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com:22/d", "eventTypes": []string{"test.created"}}, status: 400, bad: true},
		{name: "url port with a leading zero", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com:0443/d", "eventTypes": []string{"test.created"}}, status: 400, bad: true},
		{name: "url with a space", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/a b", "eventTypes": []string{"test.created"}}, status: 400, bad: true},
		{name: "url with a NUL in its fragment", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/a#x\x00y", "eventTypes": []string{"test.created"}}, status: 400, bad: true},
		{name: "url in capitals, IPv6 literal, port, query and fragment (over the cap)", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "HTTPS://[2606:2800:220:1:248:1893:25c8:1946]:8443/in?x=1#f", "eventTypes": []string{"test.created"}}, status: 409},
		{name: "a secret sent", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/d", "eventTypes": []string{"test.created"}, "secret": "whsec_x"}, status: 400, bad: true},
		{name: "member creates", method: "POST", url: hooks, key: member, body: hookBody, status: 403},
		{name: "list", method: "GET", url: hooks + "?page=1&perPage=2", key: admin, status: 200},
		{name: "list, perPage 0", method: "GET", url: hooks + "?perPage=0", key: admin, status: 400, bad: true},
		{name: "member lists", method: "GET", url: hooks, key: member, status: 403},
		{name: "other workspace", method: "GET", url: "/v1/workspaces/" + nobody + "/webhooks", key: admin, status: 404},
		{name: "retrieve", method: "GET", url: one, key: admin, status: 200},
		{name: "retrieve absent", method: "GET", url: hooks + "/" + nobody, key: admin, status: 404},
		{name: "member retrieves", method: "GET", url: hooks + "/" + nobody, key: member, status: 403},
		{name: "disable", method: "PUT", url: one, key: admin, body: map[string]any{"enabled": false}, status: 200},
		{name: "clear the description, enable", method: "PUT", url: one, key: admin, body: `{"description":null,"enabled":true}`, status: 200},
		{name: "change url and types", method: "PUT", url: one, key: admin, body: map[string]any{"url": "https://hooks.example.com/a2", "eventTypes": []string{"test.created"}}, status: 200},
		{name: "description with NUL", method: "PUT", url: one, key: admin, body: map[string]any{"description": "\x00"}, status: 400, bad: true},
		{name: "set custom headers, one sensitive", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X-Api-Key": "k_1", "X-Tenant": "acme"}, "sensitiveHeaders": []string{"X-Api-Key"}}, status: 200},
		{name: "keep the masked value", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X-Api-Key": models.WebhookHeaderMask, "X-Tenant": "globex"}, "sensitiveHeaders": []string{"X-Api-Key"}}, status: 200},
		{name: "retrieve with custom headers", method: "GET", url: one, key: admin, status: 200},
		{name: "list with custom headers", method: "GET", url: hooks, key: admin, status: 200},
		{name: "header Host", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"host": "x"}}, status: 400, bad: true},
		{name: "header webhook-id", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"Webhook-Id": "x"}}, status: 400, bad: true},
		{name: "header name not a token", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X A": "v"}}, status: 400, bad: true},
		{name: "header value with CR LF", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X-A": "a\r\nb"}}, status: 400, bad: true},
		{name: "header value with a leading space", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X-A": " v"}}, status: 400, bad: true},
		{name: "empty header value", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X-A": ""}}, status: 400, bad: true},
		{name: "21 headers", method: "PUT", url: one, key: admin, body: map[string]any{"headers": twentyOneHeaders()}, status: 400, bad: true},
		{name: "sensitiveHeaders without headers", method: "PUT", url: one, key: admin, body: map[string]any{"sensitiveHeaders": []string{"X-Api-Key"}}, status: 400, bad: true},
		{name: "header names equal but for case", method: "PUT", url: one, key: admin, body: `{"headers":{"X-A":"a","x-a":"b"}}`, status: 400},
		{name: "sensitive name not among headers", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X-A": "v"}, "sensitiveHeaders": []string{"X-B"}}, status: 400},
		{name: "the mask with no value to keep", method: "PUT", url: one, key: admin, body: map[string]any{"headers": map[string]string{"X-B": models.WebhookHeaderMask}, "sensitiveHeaders": []string{"X-B"}}, status: 400},
		{name: "create with header Content-Type", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/d", "eventTypes": []string{"test.created"}, "headers": map[string]string{"Content-Type": "text/plain"}}, status: 400, bad: true},
		{name: "remove custom headers", method: "PUT", url: one, key: admin, body: `{"headers":null,"sensitiveHeaders":null}`, status: 200},
		{name: "change url to an internationalised host and port", method: "PUT", url: one, key: admin, body: map[string]any{"url": "https://b\u00fccher.example:1024/in"}, status: 200},
		{name: "change url to one with credentials", method: "PUT", url: one, key: admin, body: map[string]any{"url": "https://token@hooks.example.com/in"}, status: 400, bad: true},
		{name: "empty update", method: "PUT", url: one, key: admin, body: `{}`, status: 400, bad: true},
		{name: "null url", method: "PUT", url: one, key: admin, body: `{"url":null}`, status: 400, bad: true},
		{name: "update without a body", method: "PUT", url: one, key: admin, status: 400, bad: true},
		{name: "update absent", method: "PUT", url: hooks + "/" + nobody, key: admin, body: `{"enabled":true}`, status: 404},
		{name: "member updates", method: "PUT", url: one, key: member, body: `{"enabled":true}`, status: 403},
		{name: "publish with Idempotency-Key", method: "POST", url: events, key: admin, body: evBody, header: idem("e-1"), status: 202},
		{name: "publish, replayed", method: "POST", url: events, key: admin, body: evBody, header: idem("e-1"), status: 202},
		{name: "publish, same key, other body", method: "POST", url: events, key: admin, body: `{"type":"test.updated","data":{}}`, header: idem("e-1"), status: 422},
		{name: "unknown type", method: "POST", url: events, key: admin, body: `{"type":"nope","data":{}}`, status: 400, bad: true},
		{name: "data not an object", method: "POST", url: events, key: admin, body: `{"type":"test.created","data":[]}`, status: 400, bad: true},
		{name: "data missing", method: "POST", url: events, key: admin, body: `{"type":"test.created"}`, status: 400, bad: true},
		{name: "data with NUL", method: "POST", url: events, key: admin, body: `{"type":"test.created","data":{"s":"\u0000"}}`, status: 400, bad: true},
		{name: "data with NUL in a member name", method: "POST", url: events, key: admin, body: `{"type":"test.created","data":{"a":[{"b\u0000":1}]}}`, status: 400, bad: true},
		{name: "member publishes", method: "POST", url: events, key: member, body: evBody, status: 403},
		// The document refers to the catalogue's schemas but does not tie
		// each type to its own, so this refusal is the API's alone.
		{name: "publish, data outside its type's schema", method: "POST", url: events, key: admin, body: `{"type":"tests.result.updated","data":{"status":3}}`, status: 400},
		{name: "event types, member key", method: "GET", url: "/v1/event-types", key: member, status: 200},
		{name: "event types, no key", method: "GET", url: "/v1/event-types", status: 401, bad: true},
		{name: "member lists keys", method: "GET", url: keys, key: member, status: 200},
	})
	h.claimInProgress("e-running", events, evBody, "1 second")
	c.do(t, srv, exchange{name: "publish while the first is running", method: "POST", url: events, key: admin, body: evBody, header: idem("e-running"), status: 409})
	var accepted models.EventAccepted
	decodeInto(t, c.do(t, srv, exchange{name: "publish", method: "POST", url: events, key: admin, body: evBody, status: 202}), &accepted)
	// Two delivery records, as the worker writes them: a failure without a
	// response, then a success.
	h.exec(`INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number, success, status_code, response_body, response_time_ms, error_message)
		VALUES (?, ?, ?, 1, false, NULL, '', 5001, 'no response in time (connect 5s, response 10s): timeout'),
		       (?, ?, ?, 2, true, 204, '', 12, NULL)`,
		uuid.New(), hook.ID, accepted.ID, uuid.New(), hook.ID, accepted.ID)
	// Events and their delivery status: one recipient pending a retry.
	h.exec(`INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, next_attempt_at, last_status_code, event_date_created)
		SELECT id, ?, 'pending', 1, now() + interval '5 minutes', 503, date_created FROM events WHERE id = ?`, hook.ID, accepted.ID)
	oneEvent := events + "/" + accepted.ID.String()
	c.runAll(t, srv, []exchange{
		{name: "list events", method: "GET", url: events, key: admin, status: 200},
		{name: "list events, filtered", method: "GET", url: events + "?type=test.created&since=2026-01-01T00:00:00Z&until=2099-01-01T00:00:00%2B01:00&page=1&perPage=1", key: admin, status: 200},
		{name: "list events, webhook.test", method: "GET", url: events + "?type=webhook.test", key: admin, status: 200},
		{name: "list events, pending at a recipient", method: "GET", url: events + "?status=pending&webhookId=" + hook.ID.String(), key: admin, status: 200},
		{name: "list events, unknown status", method: "GET", url: events + "?status=ok", key: admin, status: 400, bad: true},
		{name: "list events, malformed webhookId", method: "GET", url: events + "?webhookId=nope", key: admin, status: 400, bad: true},
		{name: "list events, unknown type", method: "GET", url: events + "?type=nope", key: admin, status: 400, bad: true},
		{name: "list events, since not a date-time", method: "GET", url: events + "?since=yesterday", key: admin, status: 400, bad: true},
		{name: "list events, since after until", method: "GET", url: events + "?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", key: admin, status: 400},
		{name: "list events, type empty", method: "GET", url: events + "?type=", key: admin, status: 200},
		{name: "list events, since and until empty", method: "GET", url: events + "?since=&until=", key: admin, status: 200},
		{name: "member lists events", method: "GET", url: events, key: member, status: 403},
		{name: "retrieve an event", method: "GET", url: oneEvent, key: admin, status: 200},
		{name: "retrieve an absent event", method: "GET", url: events + "/" + nobody, key: admin, status: 404},
		{name: "retrieve a malformed event id", method: "GET", url: events + "/nope", key: admin, status: 404, bad: true},
		{name: "member retrieves an event", method: "GET", url: oneEvent, key: member, status: 403},
		{name: "deliveries, failed", method: "GET", url: one + "/deliveries?status=failed", key: admin, status: 200},
		{name: "deliveries, of an event, succeeded", method: "GET", url: one + "/deliveries?status=succeeded&eventId=" + accepted.ID.String(), key: admin, status: 200},
		{name: "deliveries, pending", method: "GET", url: one + "/deliveries?status=pending", key: admin, status: 200},
		{name: "deliveries, pending of an event", method: "GET", url: one + "/deliveries?status=pending&eventId=" + accepted.ID.String(), key: admin, status: 200},
		{name: "deliveries, unknown status", method: "GET", url: one + "/deliveries?status=ok", key: admin, status: 400, bad: true},
		{name: "deliveries, malformed eventId", method: "GET", url: one + "/deliveries?eventId=nope", key: admin, status: 400, bad: true},
		{name: "deliveries, empty filters", method: "GET", url: one + "/deliveries?status=&eventId=", key: admin, status: 200},
	})
	// Signing-secret rotation and test events.
	rotate, test := one+"/secret/rotate", one+"/test"
	c.runAll(t, srv, []exchange{
		{name: "rotate without a body", method: "POST", url: rotate, key: admin, status: 200},
		{name: "rotate, one hour", method: "POST", url: rotate, key: admin, body: `{"gracePeriodHours":1}`, status: 200},
		{name: "rotate, no grace", method: "POST", url: rotate, key: admin, body: `{"gracePeriodSeconds":0}`, status: 200},
		{name: "rotate with Idempotency-Key", method: "POST", url: rotate, key: admin, body: `{}`, header: idem("whr-1"), status: 200},
		{name: "rotate, replayed", method: "POST", url: rotate, key: admin, body: `{}`, header: idem("whr-1"), status: 200},
		{name: "rotate, both grace fields", method: "POST", url: rotate, key: admin, body: `{"gracePeriodHours":1,"gracePeriodSeconds":1}`, status: 400, bad: true},
		{name: "rotate, over a week", method: "POST", url: rotate, key: admin, body: `{"gracePeriodHours":169}`, status: 400, bad: true},
		{name: "rotate, fractional hours", method: "POST", url: rotate, key: admin, body: `{"gracePeriodHours":1.5}`, status: 400, bad: true},
		{name: "rotate, unknown member", method: "POST", url: rotate, key: admin, body: `{"secret":"whsec_x"}`, status: 400, bad: true},
		{name: "member rotates", method: "POST", url: rotate, key: member, status: 403},
		{name: "rotate absent", method: "POST", url: hooks + "/" + nobody + "/secret/rotate", key: admin, status: 404},
		{name: "send a test event", method: "POST", url: test, key: admin, status: 202},
		{name: "send a test event with {}", method: "POST", url: test, key: admin, body: `{}`, header: idem("t-1"), status: 202},
		{name: "test event, unknown member", method: "POST", url: test, key: admin, body: `{"message":"x"}`, status: 400, bad: true},
		{name: "member sends a test event", method: "POST", url: test, key: member, status: 403},
		{name: "test event to an absent subscription", method: "POST", url: hooks + "/" + nobody + "/test", key: admin, status: 404},
		{name: "disable for the test event", method: "PUT", url: one, key: admin, body: `{"enabled":false}`, status: 200},
		{name: "test event to a disabled subscription", method: "POST", url: test, key: admin, status: 409},
		{name: "enable after the test event", method: "PUT", url: one, key: admin, body: `{"enabled":true}`, status: 200},
	})
	c.runAll(t, srv, []exchange{
		{name: "deliveries", method: "GET", url: one + "/deliveries", key: admin, status: 200},
		{name: "deliveries, page 2", method: "GET", url: one + "/deliveries?page=2&perPage=1", key: admin, status: 200},
		{name: "deliveries, bad page", method: "GET", url: one + "/deliveries?page=x", key: admin, status: 400, bad: true},
		{name: "deliveries of an absent subscription", method: "GET", url: hooks + "/" + nobody + "/deliveries", key: admin, status: 404},
		{name: "member lists deliveries", method: "GET", url: one + "/deliveries", key: member, status: 403},
		{name: "member deletes", method: "DELETE", url: one, key: member, status: 403},
		{name: "delete", method: "DELETE", url: one, key: admin, status: 204},
		{name: "delete again", method: "DELETE", url: one, key: admin, status: 404},
	})

	// A v1a subscription: created with a public key, which its own
	// endpoint shows, also across a rotation.
	var signed models.WebhookCreated
	decodeInto(t, c.do(t, srv, exchange{name: "create v1a", method: "POST", url: hooks, key: admin,
		body: map[string]any{"url": "https://hooks.example.com/v1a", "eventTypes": []string{"test.created"}, "signatureScheme": "v1a"}, status: 201}), &signed)
	v1aHook := hooks + "/" + signed.ID.String()
	c.runAll(t, srv, []exchange{
		{name: "v1a: retrieve", method: "GET", url: v1aHook, key: admin, status: 200},
		{name: "v1a: public key", method: "GET", url: v1aHook + "/public-key", key: admin, status: 200},
		{name: "v1a: rotate", method: "POST", url: v1aHook + "/secret/rotate", key: admin, body: `{"gracePeriodHours":1}`, status: 200},
		{name: "v1a: public keys in the grace period", method: "GET", url: v1aHook + "/public-key", key: admin, status: 200},
		{name: "v1a: change the scheme", method: "PUT", url: v1aHook, key: admin, body: `{"signatureScheme":"v1"}`, status: 400, bad: true},
		{name: "unknown scheme", method: "POST", url: hooks, key: admin, body: map[string]any{"url": "https://hooks.example.com/x", "eventTypes": []string{"test.created"}, "signatureScheme": "v2"}, status: 400, bad: true},
		{name: "public key of an absent subscription", method: "GET", url: hooks + "/" + nobody + "/public-key", key: admin, status: 404},
		{name: "member reads a public key", method: "GET", url: v1aHook + "/public-key", key: member, status: 403},
		{name: "delete v1a", method: "DELETE", url: v1aHook, key: admin, status: 204},
	})
	var plain models.WebhookCreated
	decodeInto(t, c.do(t, srv, exchange{name: "create v1", method: "POST", url: hooks, key: admin,
		body: map[string]any{"url": "https://hooks.example.com/v1", "eventTypes": []string{"test.created"}, "signatureScheme": "v1"}, status: 201}), &plain)
	c.runAll(t, srv, []exchange{
		{name: "v1: no public key", method: "GET", url: hooks + "/" + plain.ID.String() + "/public-key", key: admin, status: 409},
		{name: "delete v1", method: "DELETE", url: hooks + "/" + plain.ID.String(), key: admin, status: 204},
	})

	// Portal sessions.
	portal := ws + "/portal-sessions"
	var minted models.PortalSessionCreated
	decodeInto(t, c.do(t, srv, exchange{name: "mint", method: "POST", url: portal, key: admin, body: map[string]any{"expiresInSeconds": 600, "readOnly": true}, status: 201}), &minted)
	c.runAll(t, srv, []exchange{
		{name: "mint without a body", method: "POST", url: portal, key: admin, status: 201},
		{name: "mint with null", method: "POST", url: portal, key: admin, body: `null`, status: 201},
		{name: "mint, too short", method: "POST", url: portal, key: admin, body: map[string]any{"expiresInSeconds": 10}, status: 400, bad: true},
		{name: "mint, unknown member", method: "POST", url: portal, key: admin, body: `{"scope":"all"}`, status: 400, bad: true},
		{name: "member mints", method: "POST", url: portal, key: member, status: 403},
		{name: "list", method: "GET", url: portal, key: admin, status: 200},
		{name: "list, perPage over 100", method: "GET", url: portal + "?perPage=101", key: admin, status: 400, bad: true},
		{name: "member lists", method: "GET", url: portal, key: member, status: 403},
		{name: "end", method: "DELETE", url: portal + "/" + minted.ID.String(), key: admin, status: 204},
		{name: "end again", method: "DELETE", url: portal + "/" + minted.ID.String(), key: admin, status: 404},
	})

	// One API key at most (the admin's), and no WEBHOOK_SECRET_KEY.
	small := newHarness(t, noRateLimits, func(d *api.Deps) { d.Config.MaxAPIKeysPerWorkspace = 1 })
	c.runAll(t, small.srv, []exchange{
		{name: "key over the cap", method: "POST", url: "/v1/workspaces/" + small.admin.WorkspaceID.String() + "/api-keys", key: small.admin.Secret, status: 409},
		{name: "webhook without WEBHOOK_SECRET_KEY", method: "POST", url: "/v1/workspaces/" + small.admin.WorkspaceID.String() + "/webhooks", key: small.admin.Secret, body: hookBody, status: 503},
		{name: "rotate without WEBHOOK_SECRET_KEY", method: "POST", url: "/v1/workspaces/" + small.admin.WorkspaceID.String() + "/webhooks/" + nobody + "/secret/rotate", key: small.admin.Secret, status: 503},
	})

	// Redelivery and recovery, against a recording Temporal client.
	rf := newRecoveryFixture(t)
	rhooks := "/v1/workspaces/" + rf.h.admin.WorkspaceID.String() + "/webhooks/"
	recoverURL := rhooks + rf.hook.ID.String() + "/recover"
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	c.runAll(t, rf.h.srv, []exchange{
		{name: "redeliver", method: "POST", url: rf.redeliverPath(rf.hook.ID, rf.dispatched), key: rf.h.admin.Secret, status: 202},
		{name: "redeliver with {}", method: "POST", url: rf.redeliverPath(rf.hook.ID, rf.dispatched), key: rf.h.admin.Secret, body: `{}`, header: idem("rd-1"), status: 202},
		{name: "redeliver, unknown member", method: "POST", url: rf.redeliverPath(rf.hook.ID, rf.dispatched), key: rf.h.admin.Secret, body: `{"x":1}`, status: 400, bad: true},
		{name: "redeliver, not a recipient", method: "POST", url: rf.redeliverPath(rf.late.ID, rf.dispatched), key: rf.h.admin.Secret, status: 404},
		{name: "redeliver, not dispatched", method: "POST", url: rf.redeliverPath(rf.hook.ID, rf.undisp), key: rf.h.admin.Secret, status: 409},
		{name: "recovery, none yet", method: "GET", url: recoverURL, key: rf.h.admin.Secret, status: 404},
		{name: "recover", method: "POST", url: recoverURL, key: rf.h.admin.Secret, body: `{"since":"` + since + `"}`, status: 202},
		{name: "recover, since missing", method: "POST", url: recoverURL, key: rf.h.admin.Secret, body: `{}`, status: 400, bad: true},
		{name: "recover, since not a date-time", method: "POST", url: recoverURL, key: rf.h.admin.Secret, body: `{"since":"yesterday"}`, status: 400, bad: true},
		{name: "recover, until before since", method: "POST", url: recoverURL, key: rf.h.admin.Secret, body: `{"since":"` + since + `","until":"2000-01-01T00:00:00Z"}`, status: 400},
	})
	rf.tc.running = true
	rf.tc.progress = &workflows.RecoverProgress{WebhookRecovery: models.WebhookRecovery{ID: "r1", SubscriptionID: rf.hook.ID, State: models.RecoveryRunning}}
	c.runAll(t, rf.h.srv, []exchange{
		{name: "recover while one runs", method: "POST", url: recoverURL, key: rf.h.admin.Secret, body: `{"since":"` + since + `"}`, status: 409},
		{name: "recovery progress", method: "GET", url: recoverURL, key: rf.h.admin.Secret, status: 200},
	})
	rf.tc.setErr(serviceerror.NewUnavailable("down"))
	c.runAll(t, rf.h.srv, []exchange{
		{name: "recovery progress, Temporal away", method: "GET", url: recoverURL, key: rf.h.admin.Secret, status: 503},
		{name: "redeliver, Temporal away", method: "POST", url: rf.redeliverPath(rf.hook.ID, rf.dispatched), key: rf.h.admin.Secret, status: 503},
	})

	// The workspace and its invites.
	wsMember := h.addKey(models.RoleMember).Secret
	invites := ws + "/invites"
	c.runAll(t, srv, []exchange{
		{name: "retrieve the workspace", method: "GET", url: ws, key: wsMember, status: 200},
		{name: "retrieve another workspace", method: "GET", url: "/v1/workspaces/" + nobody, key: admin, status: 404},
		{name: "update the workspace", method: "PUT", url: ws, key: admin, body: map[string]any{"name": "Openlayer", "slug": "openlayer", "inviteCode": "inviteCode"}, status: 200},
		{name: "update with {}", method: "PUT", url: ws, key: admin, body: `{}`, status: 200},
		{name: "update without a body", method: "PUT", url: ws, key: admin, status: 200},
		{name: "update, blank name", method: "PUT", url: ws, key: admin, body: `{"name":" "}`, status: 400, bad: true},
		{name: "update, null slug", method: "PUT", url: ws, key: admin, body: `{"slug":null}`, status: 400, bad: true},
		{name: "update, slug upper case", method: "PUT", url: ws, key: admin, body: `{"slug":"Openlayer"}`, status: 400, bad: true},
		{name: "update, unknown member", method: "PUT", url: ws, key: admin, body: `{"status":"paused"}`, status: 400, bad: true},
		{name: "update by a member", method: "PUT", url: ws, key: wsMember, body: `{"name":"x"}`, status: 403},
		{name: "invite with Idempotency-Key", method: "POST", url: invites, key: admin, body: `{"emails":["user@email.com"],"role":"ADMIN"}`, header: idem("i-1"), status: 201},
		{name: "invite, replayed", method: "POST", url: invites, key: admin, body: `{"emails":["user@email.com"],"role":"ADMIN"}`, header: idem("i-1"), status: 201},
		{name: "invite no one", method: "POST", url: invites, key: admin, status: 200},
		{name: "invite a pending address again", method: "POST", url: invites, key: admin, body: `{"emails":["USER@email.com"]}`, status: 201},
		{name: "invite as viewer", method: "POST", url: invites, key: admin, body: `{"emails":["v@email.com"],"role":"VIEWER"}`, status: 400, bad: true},
		{name: "invite a non-address", method: "POST", url: invites, key: admin, body: `{"emails":["nope"]}`, status: 400, bad: true},
		{name: "invite, unknown member", method: "POST", url: invites, key: admin, body: `{"email":"x@email.com"}`, status: 400, bad: true},
		{name: "invite by a member", method: "POST", url: invites, key: wsMember, body: `{"emails":["m@email.com"]}`, status: 403},
		{name: "list invites", method: "GET", url: invites + "?page=1&perPage=1", key: admin, status: 200},
		{name: "list invites, perPage 0", method: "GET", url: invites + "?perPage=0", key: admin, status: 400, bad: true},
		{name: "revoke an absent invite", method: "DELETE", url: invites + "/" + nobody, key: admin, status: 404},
		{name: "revoke a malformed id", method: "DELETE", url: invites + "/nope", key: admin, status: 404, bad: true},
	})
	var created struct {
		Items []models.Invite `json:"items"`
	}
	decodeInto(t, c.do(t, srv, exchange{name: "invite two", method: "POST", url: invites, key: admin, body: `{"emails":["a@email.com","b@email.com"],"role":"member"}`, status: 201}), &created)
	inv1, inv2 := created.Items[0], created.Items[1]
	accept := func(id uuid.UUID) string { return "/v1/invites/" + id.String() + "/accept" }
	c.runAll(t, srv, []exchange{
		{name: "revoke", method: "DELETE", url: invites + "/" + inv2.ID.String(), key: admin, status: 204},
		{name: "accept a revoked invite", method: "POST", url: accept(inv2.ID), body: map[string]any{"token": inv2.Token}, status: 404},
		{name: "accept with a wrong token", method: "POST", url: accept(inv1.ID), body: map[string]any{"token": "oli_wrong"}, status: 404},
		{name: "accept without a token", method: "POST", url: accept(inv1.ID), body: `{}`, status: 400, bad: true},
		{name: "accept without a body", method: "POST", url: accept(inv1.ID), status: 400, bad: true},
		{name: "accept", method: "POST", url: accept(inv1.ID), body: map[string]any{"token": inv1.Token}, header: idem("a-1"), status: 201},
		{name: "accept, replayed", method: "POST", url: accept(inv1.ID), body: map[string]any{"token": inv1.Token}, header: idem("a-1"), status: 201},
		{name: "accept again", method: "POST", url: accept(inv1.ID), body: map[string]any{"token": inv1.Token}, status: 409},
		{name: "revoke an accepted invite", method: "DELETE", url: invites + "/" + inv1.ID.String(), key: admin, status: 409},
		{name: "invite a member", method: "POST", url: invites, key: admin, body: `{"emails":["A@email.com"]}`, status: 409},
	})
	otherWS, err := h.store.Bootstrap(context.Background(), "Other", "o-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	c.do(t, srv, exchange{name: "take another workspace's slug", method: "PUT", url: "/v1/workspaces/" + otherWS.WorkspaceID.String(), key: otherWS.Secret, body: `{"slug":"openlayer"}`, status: 409})

	// Rate limits: the read budget, and failed authentications.
	limitedH := newHarness(t, limited(1), func(d *api.Deps) { d.Config.RateLimitAuthFailures = config.RateLimit{Rate: 1.0 / 60, Burst: 1} })
	c.runAll(t, limitedH.srv, []exchange{
		{name: "read 1", method: "GET", url: "/v1/projects", key: limitedH.admin.Secret, status: 200},
		{name: "read 2", method: "GET", url: "/v1/projects", key: limitedH.admin.Secret, status: 200},
		{name: "read 3", method: "GET", url: "/v1/projects", key: limitedH.admin.Secret, status: 200},
		{name: "read 4, over the burst", method: "GET", url: "/v1/projects", key: limitedH.admin.Secret, status: 429},
		{name: "a wrong key", method: "GET", url: "/v1/projects", key: "olk_wrong", status: 401},
		{name: "another wrong key, throttled", method: "GET", url: "/v1/projects", key: "olk_wrong2", status: 429},
	})

	// PostgreSQL unreachable.
	c.do(t, unreachableDatabase(t), exchange{name: "database down", method: "GET", url: "/v1/projects", key: "olk_" + strings.Repeat("a", 40), status: 503})

	c.requireCoverage(t)
}

// unreachableDatabase is the API on a database address nothing listens on.
func unreachableDatabase(t *testing.T) http.Handler {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db, err := store.Open("postgres://postgres@"+addr+"/none?sslmode=disable", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return api.New(api.Deps{Config: config.Defaults(), Store: store.New(db), Log: slog.New(slog.DiscardHandler)})
}

// requireCoverage fails unless every operation of the document was
// exercised with a success, and logs the statuses seen (go test -v).
func (c *contract) requireCoverage(t *testing.T) {
	t.Helper()
	var lines []string
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			op := method + " " + path
			seen := c.seen[op]
			ok := false
			var statuses []int
			for s := range seen {
				statuses = append(statuses, s)
				ok = ok || s < 300
			}
			slices.Sort(statuses)
			if !ok {
				t.Errorf("%s: no successful exchange validated", op)
			}
			lines = append(lines, fmt.Sprintf("%-60s %v", op, statuses))
		}
	}
	slices.Sort(lines)
	t.Logf("statuses validated per operation:\n%s\n(no operation) %v", strings.Join(lines, "\n"), c.seen["(no operation)"])
}

// twentyOneHeaders is one custom header more than a subscription may have.
func twentyOneHeaders() map[string]string {
	m := make(map[string]string, 21)
	for i := range 21 {
		m[fmt.Sprintf("X-H%d", i)] = "v"
	}
	return m
}

package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestUnknownRoutesAndMethods(t *testing.T) {
	h := newHarness(t)
	k := h.admin.Secret
	h.run([]apiCase{
		{name: "unknown root path", method: http.MethodGet, url: "/nope", status: http.StatusNotFound, wantCode: "not_found"},
		{name: "unknown /v1 path", method: http.MethodGet, url: "/v1/nope", key: k, status: http.StatusNotFound, wantCode: "not_found"},
		{name: "unversioned projects", method: http.MethodGet, url: "/projects", key: k, status: http.StatusNotFound, wantCode: "not_found"},
		{name: "trailing slash", method: http.MethodGet, url: "/v1/projects/", key: k, status: http.StatusNotFound, wantCode: "not_found"},
		{name: "nested too deep", method: http.MethodDelete, url: "/v1/projects/" + uuid.NewString() + "/x", key: k, status: http.StatusNotFound, wantCode: "not_found"},
		{name: "PUT on the projects collection", method: http.MethodPut, url: "/v1/projects", key: k, body: `{}`, status: http.StatusMethodNotAllowed, wantCode: "method_not_allowed"},
		{name: "DELETE on the projects collection", method: http.MethodDelete, url: "/v1/projects", key: k, status: http.StatusMethodNotAllowed, wantCode: "method_not_allowed"},
		{name: "GET on one project", method: http.MethodGet, url: "/v1/projects/" + uuid.NewString(), key: k, status: http.StatusMethodNotAllowed, wantCode: "method_not_allowed"},
		{name: "POST on healthz", method: http.MethodPost, url: "/healthz", status: http.StatusMethodNotAllowed, wantCode: "method_not_allowed"},
		{name: "wrong method without a key", method: http.MethodPatch, url: "/v1/projects", status: http.StatusMethodNotAllowed, wantCode: "method_not_allowed"},
	})

	// A 405 says which methods the path takes.
	for url, want := range map[string]string{
		"/v1/projects":                     "GET, POST",
		"/v1/projects/" + uuid.NewString(): "DELETE",
		"/healthz":                         "GET",
	} {
		if got := h.do(http.MethodPut, url, k, nil).Header().Get("Allow"); got != want {
			t.Errorf("PUT %s: Allow %q, want %q", url, got, want)
		}
	}
}

var generatedID = regexp.MustCompile(`^[0-9a-f]{24}$`)

func TestRequestID(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name   string
		sent   string // "" sends none
		echoed bool
	}{
		{"none sent", "", false},
		{"a sane id is kept", "req-123_abc.DEF:9", true},
		{"a uuid is kept", uuid.NewString(), true},
		{"128 characters are kept", strings.Repeat("a", 128), true},
		{"129 characters are replaced", strings.Repeat("a", 129), false},
		{"spaces are replaced", "abc def", false},
		{"a newline is replaced", "abc\nX-Injected: 1", false},
		{"a carriage return is replaced", "abc\r\n", false},
		{"quotes and angle brackets are replaced", `"><script>`, false},
		{"non-ASCII is replaced", "idé", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Both a success and an error carry the id.
			for _, url := range []string{"/healthz", "/v1/projects"} {
				r := request(t, http.MethodGet, url, "", nil)
				if c.sent != "" {
					r.Header["X-Request-Id"] = []string{c.sent}
				}
				rec := httptest.NewRecorder()
				h.srv.ServeHTTP(rec, r)
				got := rec.Header().Get("X-Request-Id")
				switch {
				case c.echoed && got != c.sent:
					t.Errorf("%s: X-Request-Id %q, want the sent %q", url, got, c.sent)
				case !c.echoed && !generatedID.MatchString(got):
					t.Errorf("%s: X-Request-Id %q, want a generated id", url, got)
				}
				if rec.Code == http.StatusUnauthorized {
					if e := checkError(t, rec, "missing_credentials", ""); e.Error.RequestID != got {
						t.Errorf("body requestId %q, header %q", e.Error.RequestID, got)
					}
				}
				if !strings.Contains(h.logs.String(), `"requestId":"`+got+`"`) {
					t.Errorf("no log line with requestId %q", got)
				}
			}
		})
	}
	// Generated ids differ.
	a, b := h.do(http.MethodGet, "/healthz", "", nil), h.do(http.MethodGet, "/healthz", "", nil)
	if a.Header().Get("X-Request-Id") == b.Header().Get("X-Request-Id") {
		t.Error("two requests got the same generated id")
	}
}

// A panicking handler becomes a generic 500: nothing of the panic reaches
// the caller, everything reaches the log under the request id.
func TestPanicBecomesGeneric500(t *testing.T) {
	h := newHarness(t)
	const secretDetail = "db password is hunter2"
	handler := h.srv.ObserveForTest(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(secretDetail)
	}))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, request(t, http.MethodGet, "/boom", "", nil, "X-Request-Id", "req-500"))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	e := checkError(t, rec, "internal_error", "")
	if strings.Contains(rec.Body.String(), "hunter2") || strings.Contains(rec.Body.String(), "panic") {
		t.Errorf("the body reveals the panic: %s", rec.Body)
	}
	if e.Error.RequestID != "req-500" {
		t.Errorf("requestId %q", e.Error.RequestID)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, secretDetail) || !strings.Contains(logs, `"requestId":"req-500"`) || !strings.Contains(logs, "goroutine") {
		t.Errorf("the log lacks the panic, its stack or the request id:\n%s", logs)
	}

	// A panic after the response started cannot change the status, and
	// must not write a second body.
	late := h.srv.ObserveForTest(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("partial"))
		panic("late")
	}))
	rec = httptest.NewRecorder()
	late.ServeHTTP(rec, request(t, http.MethodGet, "/late", "", nil))
	if rec.Code != http.StatusAccepted || rec.Body.String() != "partial" {
		t.Errorf("late panic: %d %q", rec.Code, rec.Body)
	}

	// http.ErrAbortHandler is net/http's way to abort a response; it must
	// reach the server, not become a 500.
	abort := h.srv.ObserveForTest(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler re-panicked", p)
			}
		}()
		abort.ServeHTTP(httptest.NewRecorder(), request(t, http.MethodGet, "/abort", "", nil))
	}()
}

func TestHealthAndReadiness(t *testing.T) {
	h := newHarness(t) // no Temporal client
	rec := h.do(http.MethodGet, "/healthz", "", nil)
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
		t.Errorf("healthz: %d %s", rec.Code, rec.Body)
	}

	rec = h.do(http.MethodGet, "/readyz", "", nil)
	var ready struct {
		Ready  bool              `json:"ready"`
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ready); err != nil {
		t.Fatalf("readyz body %s: %v", rec.Body, err)
	}
	// Without Temporal the API still serves (events wait in the outbox):
	// ready, with Temporal's state in the body.
	if rec.Code != http.StatusOK || !ready.Ready ||
		ready.Checks["postgres"] != "ok" || !strings.HasPrefix(ready.Checks["temporal"], "not configured") {
		t.Errorf("readyz without Temporal: %d %s", rec.Code, rec.Body)
	}

	// A pending migration makes the API not ready.
	h.exec("DELETE FROM bun_migrations")
	rec = h.do(http.MethodGet, "/readyz", "", nil)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "not migrated") {
		t.Errorf("readyz with a pending migration: %d %s", rec.Code, rec.Body)
	}
}

// Metrics are labelled with route templates, never raw paths, so ids do
// not create series.
func TestMetricsUseRouteTemplates(t *testing.T) {
	h := newHarness(t)
	id := uuid.NewString()
	h.do(http.MethodDelete, "/v1/projects/"+id, h.admin.Secret, nil)
	h.do(http.MethodGet, "/v1/nope/"+id, "", nil)
	rec := h.do(http.MethodGet, "/metrics", "", nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: %d", rec.Code)
	}
	for _, want := range []string{
		`api_http_requests_total{code="404",method="DELETE",route="/v1/projects/{projectId}"} 1`,
		`api_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, id) {
		t.Error("a raw id reached a metric label")
	}
}

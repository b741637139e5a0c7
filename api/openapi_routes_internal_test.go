package api

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/internal/config"
)

// loadOpenAPI loads and validates the embedded document as OpenAPI 3.1.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	if err != nil {
		t.Fatalf("api/openapi.json does not load: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("api/openapi.json is OpenAPI %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// pathParam matches a path parameter in a mux template or an OpenAPI path.
var pathParam = regexp.MustCompile(`\{[^{}]*\}`)

// normalisePath blanks parameter names, so /a/{id} and /a/{apiKeyId} are
// the same path: which name each side uses is not what this test checks.
func normalisePath(p string) string { return pathParam.ReplaceAllString(p, "{}") }

// routerOperations is every "METHOD /path" the real router serves, as
// Router.Walk reports the routes that carry methods.
func routerOperations(t *testing.T) []string {
	t.Helper()
	s := New(Deps{Config: config.Defaults(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	router, ok := s.routes().(*mux.Router)
	if !ok {
		t.Fatalf("routes() is a %T, want a *mux.Router", s.routes())
	}
	var ops []string
	err := router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			return nil // a path prefix of subroutes, not an endpoint
		}
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		for _, m := range methods {
			ops = append(ops, m+" "+normalisePath(tpl))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// documentOperations is every "METHOD /path" of the document, each path
// prefixed with its server's path (a path's own servers override the
// document's: /healthz is outside /v1).
func documentOperations(t *testing.T, doc *openapi3.T) []string {
	t.Helper()
	var ops []string
	for path, item := range doc.Paths.Map() {
		servers := doc.Servers
		if len(item.Servers) > 0 {
			servers = item.Servers
		}
		if len(servers) != 1 {
			t.Fatalf("%s: %d servers, want one", path, len(servers))
		}
		u, err := url.Parse(servers[0].URL)
		if err != nil {
			t.Fatalf("%s: server %q: %v", path, servers[0].URL, err)
		}
		full := strings.TrimSuffix(u.Path, "/") + path
		for method := range item.Operations() {
			ops = append(ops, strings.ToUpper(method)+" "+normalisePath(full))
		}
	}
	return ops
}

// The router and api/openapi.json describe the same endpoints: a route
// without an operation, or an operation without a route, fails here.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	doc := loadOpenAPI(t)
	routes, documented := routerOperations(t), documentOperations(t, doc)
	slices.Sort(routes)
	slices.Sort(documented)
	for _, op := range routes {
		if !slices.Contains(documented, op) {
			t.Errorf("the router serves %s, which api/openapi.json does not describe", op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(routes, op) {
			t.Errorf("api/openapi.json describes %s, which the router does not serve", op)
		}
	}
	if len(routes) != len(slices.Compact(slices.Clone(routes))) {
		t.Errorf("the router serves an operation twice: %v", routes)
	}
	if len(documented) != len(slices.Compact(slices.Clone(documented))) {
		t.Errorf("api/openapi.json describes an operation twice: %v", documented)
	}
	if t.Failed() {
		t.Logf("router: %v\ndocument: %v", routes, documented)
	}
}

// Every operation that takes an API key lists the errors any such request
// may get, and every response names the X-Request-Id every response has.
func TestOpenAPIDocumentCommonErrors(t *testing.T) {
	doc := loadOpenAPI(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			for status, resp := range op.Responses.Map() {
				if resp.Value.Headers["X-Request-Id"] == nil {
					t.Errorf("%s: response %s without X-Request-Id", name, status)
				}
			}
			if op.Security != nil && len(*op.Security) == 0 {
				continue // needs no key
			}
			for _, status := range []int{401, 429, 500, 503} {
				if op.Responses.Status(status) == nil {
					t.Errorf("%s takes an API key but does not list %d", name, status)
				}
			}
		}
	}
}

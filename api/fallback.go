package api

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

var probeMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions,
}

// fallback answers requests no route takes: 405 with an Allow header when
// the path exists under other methods, else 404. It probes the router per
// method because gorilla/mux loses a method mismatch inside subrouters (the
// parent's path-prefix matcher, succeeding, clears it).
func (s *Server) fallback(router *mux.Router) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, m := range probeMethods {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			var match mux.RouteMatch
			// The root router "matches" everything through its fallback
			// handlers, reporting that as MatchErr; only a clean match counts.
			if router.Match(probe, &match) && match.MatchErr == nil {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) == 0 {
			s.writeStatus(w, r, http.StatusNotFound, "no route matches "+r.Method+" "+r.URL.Path)
			return
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeStatus(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path+"; use "+strings.Join(allowed, ", "))
	})
}

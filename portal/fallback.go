package portal

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

// fallbackRoute names the route that takes every other /portal/ address.
const fallbackRoute = "portal_fallback"

var probeMethods = []string{http.MethodGet, http.MethodPost}

// noRoute answers an address under /portal/ that no page has with a portal
// page, not the API's JSON: 405 with Allow when the address takes another
// method (a form's address opened as a page), else 404. It probes the
// router per method, as the API's fallback does, skipping itself.
func (p *Portal) noRoute(router *mux.Router) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, m := range probeMethods {
			probe := r.Clone(r.Context())
			probe.Method = m
			var match mux.RouteMatch
			if m != r.Method && router.Match(probe, &match) && match.MatchErr == nil &&
				match.Route != nil && match.Route.GetName() != fallbackRoute {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) == 0 {
			p.message(w, r, http.StatusNotFound, "Page not found",
				"The portal has no page at this address. Use the links of the portal rather than a typed or saved address.")
			return
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		p.message(w, r, http.StatusMethodNotAllowed, "Not a page",
			"This address takes a form's answer and is not a page to open: the form was already sent, or the address was opened by hand. Nothing was done.")
	}
}

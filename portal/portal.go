// Package portal serves the consumer portal: web pages, under /portal/ in
// the API process, where the people who receive a workspace's webhooks
// manage their endpoints and see, retry and test their deliveries. An
// admin mints a single-use link (POST /v1/.../portal-sessions); opening it
// trades the link's token for a session cookie bound to the workspace.
//
// Pages are rendered on the server with html/template from embedded files:
// no build step, no asset from elsewhere, no inline script (the
// Content-Security-Policy allows 'self' only). Every action goes through
// webhookops and internal/store, as the API's do.
package portal

import (
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// Deps are what the portal needs from its process.
type Deps struct {
	Config config.Config
	Store  *store.Store
	Ops    *webhookops.Ops
	// Outbox wakes the workers' relays after a test event or a rotation.
	Outbox *store.Notifier
	Log    *slog.Logger
	// Now is the clock; defaults to time.Now.
	Now func() time.Time
}

// Portal serves the pages; Mount adds them to the API's router.
type Portal struct {
	cfg    config.Config
	store  *store.Store
	ops    *webhookops.Ops
	outbox *store.Notifier
	log    *slog.Logger
	now    func() time.Time
	pages  *pages
	// publicURL is PORTAL_PUBLIC_URL parsed; nil when unset.
	publicURL *url.URL
	admit     func(r *http.Request, sessionID, workspaceID uuid.UUID) (time.Duration, bool)
	// openRefused and openFailed throttle failed link openings per address.
	openRefused func(r *http.Request) (time.Duration, bool)
	openFailed  func(r *http.Request)
}

// New builds the portal; its templates are parsed once, here.
func New(d Deps) *Portal {
	if d.Now == nil {
		d.Now = time.Now
	}
	p := &Portal{cfg: d.Config, store: d.Store, ops: d.Ops, outbox: d.Outbox, log: d.Log, now: d.Now, pages: parsePages()}
	if d.Config.PortalPublicURL != "" {
		p.publicURL, _ = url.Parse(d.Config.PortalPublicURL) // config.ParsePublicURL checked it
	}
	return p
}

// Mount adds the portal's routes under /portal to r, the API's router, so
// the API's middleware logs and meters them by route template. admit draws
// each request of a session from the API's rate limits; openRefused and
// openFailed throttle an address whose links keep being refused, as the
// API throttles failed authentications.
func (p *Portal) Mount(r *mux.Router,
	admit func(r *http.Request, sessionID, workspaceID uuid.UUID) (time.Duration, bool),
	openRefused func(r *http.Request) (time.Duration, bool),
	openFailed func(r *http.Request)) {
	p.admit, p.openRefused, p.openFailed = admit, openRefused, openFailed
	pr := r.PathPrefix("/portal").Subrouter()
	pr.Use(securityHeaders)
	pr.Handle("", http.RedirectHandler("/portal/", http.StatusSeeOther)).Methods(http.MethodGet).Name("portal_root")
	pr.HandleFunc("/static/{file}", p.serveStatic).Methods(http.MethodGet).Name("portal_static")
	pr.HandleFunc("/open", p.showOpen).Methods(http.MethodGet).Name("portal_open")
	pr.HandleFunc("/open", p.open).Methods(http.MethodPost).Name("portal_open_continue")
	pr.HandleFunc("/ended", p.ended).Methods(http.MethodGet).Name("portal_ended")

	// Every form answers with a redirect to a page (POST-redirect-GET) and
	// is guarded by form: CSRF, a writable session, a one-time token.
	s := pr.NewRoute().Subrouter()
	s.Use(p.authenticate)
	s.HandleFunc("/", p.listEndpoints).Methods(http.MethodGet).Name("portal_endpoints")
	s.HandleFunc("/event-types", p.eventTypes).Methods(http.MethodGet).Name("portal_event_types")
	s.HandleFunc("/messages", p.listMessages).Methods(http.MethodGet).Name("portal_messages")
	s.HandleFunc("/messages/{eventId}", p.showMessage).Methods(http.MethodGet).Name("portal_message")
	s.Handle("/endpoints/new", p.writable(p.newEndpoint)).Methods(http.MethodGet).Name("portal_endpoint_new")
	s.Handle("/endpoints", p.form(p.createEndpoint)).Methods(http.MethodPost).Name("portal_endpoint_create")
	s.HandleFunc("/endpoints/{webhookId}", p.showEndpoint).Methods(http.MethodGet).Name("portal_endpoint")
	s.Handle("/endpoints/{webhookId}", p.form(p.updateEndpoint)).Methods(http.MethodPost).Name("portal_endpoint_update")
	s.HandleFunc("/endpoints/{webhookId}/created", p.showCreated).Methods(http.MethodGet).Name("portal_endpoint_created")
	s.Handle("/endpoints/{webhookId}/edit", p.writable(p.editEndpoint)).Methods(http.MethodGet).Name("portal_endpoint_edit")
	s.Handle("/endpoints/{webhookId}/enabled", p.form(p.setEnabled)).Methods(http.MethodPost).Name("portal_endpoint_enabled")
	s.Handle("/endpoints/{webhookId}/delete", p.writable(p.confirmDelete)).Methods(http.MethodGet).Name("portal_endpoint_delete_confirm")
	s.Handle("/endpoints/{webhookId}/delete", p.form(p.deleteEndpoint)).Methods(http.MethodPost).Name("portal_endpoint_delete")
	s.Handle("/endpoints/{webhookId}/rotate", p.writable(p.confirmRotate)).Methods(http.MethodGet).Name("portal_endpoint_rotate_confirm")
	s.Handle("/endpoints/{webhookId}/rotate", p.form(p.rotateSecret)).Methods(http.MethodPost).Name("portal_endpoint_rotate")
	s.HandleFunc("/endpoints/{webhookId}/rotated", p.showRotated).Methods(http.MethodGet).Name("portal_endpoint_rotated")
	s.Handle("/endpoints/{webhookId}/test", p.form(p.sendTest)).Methods(http.MethodPost).Name("portal_endpoint_test")
	s.Handle("/endpoints/{webhookId}/recover", p.writable(p.confirmRecover)).Methods(http.MethodGet).Name("portal_endpoint_recover_confirm")
	s.Handle("/endpoints/{webhookId}/recover", p.form(p.recoverFailed)).Methods(http.MethodPost).Name("portal_endpoint_recover")
	s.Handle("/endpoints/{webhookId}/deliveries/{eventId}/redeliver", p.form(p.redeliver)).Methods(http.MethodPost).Name("portal_delivery_redeliver")
	s.Handle("/logout", p.changeAlways(p.logout)).Methods(http.MethodPost).Name("portal_logout")
	// Last: any other address under /portal/ gets a portal page.
	s.Path("/{path:.*}").HandlerFunc(p.noRoute(r)).Name(fallbackRoute)
}

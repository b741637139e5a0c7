package portal

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openlayer-ai/workspace-service/models"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFS embed.FS // served by static.go under content-addressed names

// view is what every page gets; Data is the page's own.
type view struct {
	Title   string
	Message string
	Notice  string
	Session *session
	// Errors are a form's validation messages, by field ("" for the form).
	Errors []models.FieldError
	// Refresh makes the page reload itself every 2 s (portal.js) while
	// something it shows is under way.
	Refresh bool
	// Once is the one-time token of the page's forms (once.go).
	Once string
	// Back leads an error page back to where the person was.
	Back, BackText string
	// Brand is whose portal it is, shown in every page's header: the
	// session's, or the link's on the page a link opens on.
	Brand *brand
	Data  any
}

// brand is the workspace a portal page belongs to and, when the link was
// minted with them, the host application's name and logo.
type brand struct {
	WorkspaceName   string
	ApplicationName string
	LogoURL         string
}

func brandOf(s *models.PortalSession) *brand {
	b := &brand{WorkspaceName: s.WorkspaceName}
	if s.ApplicationName != nil {
		b.ApplicationName = *s.ApplicationName
	}
	if s.LogoURL != nil {
		b.LogoURL = *s.LogoURL
	}
	return b
}

// cspSource is the logo's address as a Content-Security-Policy source,
// scheme, host and path: the one other place the page may load from. The
// API admitted only URLs that cannot break out of the policy.
func (b *brand) cspSource() string {
	u, err := url.Parse(b.LogoURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// FieldError is the message for one form field, "" when it has none.
func (v view) FieldError(field string) string {
	for _, e := range v.Errors {
		if e.Field == field || strings.HasPrefix(e.Field, field+"[") {
			return plainMessage(e.Message)
		}
	}
	return ""
}

// pages are the parsed templates, one set per page sharing layout.html.
type pages struct{ byName map[string]*template.Template }

var funcs = template.FuncMap{
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"whenp": func(t *time.Time) string {
		if t == nil {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"kb":         firstKB,
	"has":        func(list []models.EventType, t models.EventType) bool { return contains(list, t) },
	"eventTypes": func() []models.EventType { return models.EventTypes },
	"deref":      func(p *int) int { return *p },
	// unix is an attempt's webhook-timestamp: the attempt records when it
	// started, the time it signed and sent.
	"unix":  func(t time.Time) int64 { return t.Unix() },
	"add":   func(a, b int) int { return a + b },
	"label": fieldLabel,
	"plain": plainMessage,
	// fieldID is the id of a message's field on the page: eventTypes[1]
	// is about the event types' fieldset, eventTypes.
	"fieldID": func(field string) string { name, _, _ := strings.Cut(field, "["); return name },
	// asset is a static file's content-addressed path (static.go).
	"asset": func(name string) (string, error) { return staticAssets.path(name) },
}

func contains(list []models.EventType, t models.EventType) bool {
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}

// firstKB is the first 1 KB of a response body, cut at a character boundary.
func firstKB(s string) string {
	if len(s) <= 1024 {
		return s
	}
	s = s[:1024]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

func parsePages() *pages {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html"))
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t := template.Must(layout.Clone())
		template.Must(t.ParseFS(templateFiles, n))
		p.byName[name] = t
	}
	return p
}

// render writes a page; it renders into a buffer first, so a template
// error becomes a plain 500, not half a page.
func (p *pages) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	if v.Session == nil {
		v.Session = sessionOf(r)
	}
	if v.Session != nil && v.Once == "" {
		v.Once = newFormToken()
	}
	if v.Brand == nil && v.Session != nil {
		v.Brand = brandOf(&v.Session.PortalSession)
	}
	if v.Brand != nil && v.Brand.LogoURL != "" {
		if src := v.Brand.cspSource(); src != "" {
			w.Header().Set("Content-Security-Policy", contentSecurityPolicy(src))
		} else {
			v.Brand.LogoURL = ""
		}
	}
	var buf bytes.Buffer
	if err := p.byName[name].ExecuteTemplate(&buf, "layout.html", v); err != nil {
		http.Error(w, "the page could not be rendered; quote the X-Request-Id header when reporting it", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders an error of the store or webhookops: a models error with
// its status and a plain message, anything else as a logged, generic 500;
// the page leads back to where the person was.
func (p *Portal) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := models.HTTPStatus(err)
	var me *models.Error
	title, msg := statusTitles[http.StatusInternalServerError], "Something went wrong on our side. Quote the request id "+w.Header().Get("X-Request-Id")+" when reporting it."
	switch {
	case errors.As(err, &me):
		title, msg = describeError(status, me)
	case status == http.StatusInternalServerError:
		p.log.ErrorContext(r.Context(), "portal request failed", slog.String("requestId", w.Header().Get("X-Request-Id")), slog.Any("error", err))
	case status == http.StatusServiceUnavailable:
		p.log.WarnContext(r.Context(), "portal request failed: a dependency is unavailable", slog.String("requestId", w.Header().Get("X-Request-Id")), slog.Any("error", err))
		title, msg = statusTitles[status], "The service cannot reach a dependency right now. Nothing was changed; try again in a few seconds."
	default:
		title, msg = statusTitles[status], sentence(err.Error()) // a bare sentinel, such as models.ErrNotFound
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	p.message(w, r, status, title, msg)
}

// message renders an error or notice page with a link back (backTo).
func (p *Portal) message(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	back, text := backTo(r, status)
	p.pages.render(w, r, status, "message", view{Title: title, Message: msg, Back: back, BackText: text})
}

// backTo is where an error page leads: the endpoint a sub-page or form of
// it was about, unless that endpoint is what was not found; the messages
// from a message or the filtered messages; else the list.
func backTo(r *http.Request, status int) (href, text string) {
	if r.URL.Path == "/portal/messages" || strings.HasPrefix(r.URL.Path, "/portal/messages/") {
		return "/portal/messages", "Back to the messages"
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/portal/endpoints/")
	id, sub, _ := strings.Cut(rest, "/")
	if _, valid := parseID(id); ok && valid && (sub != "" || r.Method != http.MethodGet) && status != http.StatusNotFound {
		return "/portal/endpoints/" + id, "Back to the endpoint"
	}
	return "/portal/", "Back to the endpoints"
}

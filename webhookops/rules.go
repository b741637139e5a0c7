package webhookops

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
	"github.com/openlayer-ai/workspace-service/models"
)

// The rules a subscription's fields obey. Each checks one value, adds what
// is wrong to v under the API's field name, and returns the value to store.

// CheckRateLimit checks rateLimitPerSecond.
func CheckRateLimit(n int, v *models.Validation) *int {
	if n < 1 || n > models.RateLimitPerSecondMax {
		v.Add("rateLimitPerSecond", "must be from 1 to "+strconv.Itoa(models.RateLimitPerSecondMax)+", or null for no limit")
	}
	return &n
}

// CheckURL accepts an absolute https URL without credentials. Unless
// private networks are allowed, an internal IP literal or localhost is
// refused now; other names are checked on every delivery, after resolution.
func CheckURL(raw string, allowPrivate bool, v *models.Validation) string {
	if utf8.RuneCountInString(raw) > models.WebhookURLMax {
		v.Add("url", "must be at most 2048 characters")
		return raw
	}
	u, err := url.Parse(raw)
	host := ""
	if err == nil && u.Hostname() != "" {
		host = hostProblem(u.Hostname(), allowPrivate)
	}
	switch {
	case raw == "":
		v.Add("url", "is required")
	case err != nil || strings.ContainsFunc(raw, isSpaceOrControl):
		v.Add("url", "is not a valid URL")
	case u.Scheme != "https":
		v.Add("url", "must be an absolute https:// URL")
	case u.Opaque != "" || u.Hostname() == "":
		v.Add("url", "must be an absolute https:// URL with a host")
	case u.User != nil:
		v.Add("url", "must not contain credentials (user:password@); authenticate deliveries with the signing secret")
	case host != "":
		v.Add("url", host)
	case !ValidPort(u.Port()):
		v.Add("url", "must use port 443 (the default) or a port from 1024 to 65535, written without leading zeros")
	case !allowPrivate && internalHost(u.Hostname()):
		v.Add("url", "must not point to a loopback, private, link-local or otherwise internal address")
	}
	return raw
}

// isSpaceOrControl is a space or an ASCII control character: refused
// anywhere in a URL, the fragment included, which url.Parse does not check
// (and PostgreSQL would silently drop a NUL from the stored URL).
func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// ValidPort admits 443 and the unprivileged range: the ports below 1024
// host other protocols (SSH, SMTP, ...), which a signed POST has no business
// reaching. A leading zero is refused so the port reads as the number it is.
func ValidPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && p[0] != '0' && (n == 443 || (n >= 1024 && n <= 65535))
}

func internalHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	_, blocked := netguard.BlockedHost(h)
	return blocked
}

// CheckEventTypes checks a non-empty list of catalogue types, each once.
func CheckEventTypes(raw []string, v *models.Validation) []models.EventType {
	if len(raw) == 0 {
		v.Add("eventTypes", "must list at least one event type ("+models.EventTypeList()+")")
		return nil
	}
	if len(raw) > len(models.EventTypes) {
		v.Add("eventTypes", "must list at most "+strconv.Itoa(len(models.EventTypes))+" event types, each once ("+models.EventTypeList()+")")
		return nil
	}
	out := make([]models.EventType, 0, len(raw))
	seen := map[string]bool{}
	for i, s := range raw {
		field := "eventTypes[" + strconv.Itoa(i) + "]"
		switch {
		case !models.EventType(s).Valid():
			v.Add(field, strconv.Quote(TruncateText(s, 64))+" is not an event type; use one of "+models.EventTypeList())
		case seen[s]:
			v.Add(field, strconv.Quote(s)+" is listed twice")
		default:
			seen[s] = true
			out = append(out, models.EventType(s))
		}
	}
	return out
}

// CheckDescription checks a description's length and characters.
func CheckDescription(s string, v *models.Validation) string {
	switch {
	case utf8.RuneCountInString(s) > models.WebhookDescriptionMax:
		v.Add("description", "must be at most 500 characters")
	case strings.ContainsRune(s, 0):
		v.Add("description", "must not contain NUL characters")
	}
	return s
}

// TruncateText keeps echoed input short in error messages.
func TruncateText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "..."
}

// CheckSignatureScheme accepts "v1" (HMAC) or "v1a" (ed25519).
func CheckSignatureScheme(s string, v *models.Validation) models.SignatureScheme {
	switch scheme := models.SignatureScheme(s); scheme {
	case models.SignatureV1, models.SignatureV1a:
		return scheme
	}
	v.Add("signatureScheme", `must be "v1" (HMAC-SHA256 with a whsec_ secret) or "v1a" (ed25519, verified with a whpk_ public key)`)
	return models.SignatureV1
}

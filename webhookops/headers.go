package webhookops

import (
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/openlayer-ai/workspace-service/models"
)

// HeaderField is one member of a request's headers object, in the order
// sent, duplicates kept so that they can be refused.
type HeaderField struct {
	Name, Value string
}

// refusedHeaders are the names a subscription may not set (lower case), with
// why: hop-by-hop headers (RFC 9110 §7.6.1), which a proxy drops and Go's
// HTTP/2 client refuses; and what the service or Go's client sets on every
// attempt, which a custom value would override or contradict. Content-* and
// webhook-* are refused as prefixes (refusedPrefix).
var refusedHeaders = map[string]string{
	"connection":          hopByHop,
	"keep-alive":          hopByHop,
	"proxy-authenticate":  hopByHop,
	"proxy-authorization": hopByHop,
	"proxy-connection":    hopByHop,
	"te":                  hopByHop,
	"trailer":             hopByHop,
	"transfer-encoding":   hopByHop,
	"upgrade":             hopByHop,
	"host":                "is set by HTTP from the subscription's URL",
	"user-agent":          "is set by the service on every delivery, naming the sender",
	"accept-encoding":     "is set by the service's HTTP client, which decodes the response it asks for",
	"expect":              "would change how the request is sent (100-continue)",
	"traceparent":         traceContext,
	"tracestate":          traceContext,
}

const (
	hopByHop     = "is a hop-by-hop header, which proxies remove: it cannot be sent end to end"
	traceContext = "is a W3C Trace Context header, which belongs to the sender's tracing"
)

// refusedPrefix says why a name is refused by its prefix, or "".
func refusedPrefix(lower string) string {
	switch {
	case strings.HasPrefix(lower, "content-"):
		return "is a Content-* header, which describes the body the service sends"
	case strings.HasPrefix(lower, "webhook-"):
		return "is a webhook-* header, which Standard Webhooks reserves for the id, timestamp and signature"
	}
	return ""
}

// CheckHeaders checks a subscription's custom headers and the names among
// them that are sensitive, and returns them sorted by name, case-insensitively.
// With keep (an update), a sensitive header whose value is the mask keeps
// the stored value. No message echoes a value.
func CheckHeaders(fields []HeaderField, sensitive []string, keep bool, v *models.Validation) []models.WebhookHeader {
	if len(fields) > models.WebhookHeadersMax {
		v.Add("headers", "must have at most "+strconv.Itoa(models.WebhookHeadersMax)+" headers")
		return nil
	}
	secret := checkSensitiveNames(fields, sensitive, v)
	out := make([]models.WebhookHeader, 0, len(fields))
	seen := map[string]string{}
	for _, f := range fields {
		lower := strings.ToLower(f.Name)
		if problem := headerNameProblem(f.Name); problem != "" {
			v.Add("headers", strconv.Quote(TruncateText(f.Name, 64))+" "+problem)
			continue
		}
		field := "headers." + f.Name
		if why := refusedName(lower); why != "" {
			v.Add(field, "cannot be set: it "+why)
			continue
		}
		if first, ok := seen[lower]; ok {
			v.Add(field, "repeats "+strconv.Quote(first)+" (header names are case-insensitive)")
			continue
		}
		seen[lower] = f.Name
		h := models.WebhookHeader{Name: f.Name, Value: f.Value, Sensitive: secret[lower]}
		switch {
		case f.Value == models.WebhookHeaderMask && h.Sensitive && keep:
			h.Value, h.Keep = "", true
		case f.Value == models.WebhookHeaderMask && keep:
			v.Add(field, "is the mask shown for a sensitive value: list the name in sensitiveHeaders to keep the stored value, or send the real value")
		case f.Value == models.WebhookHeaderMask:
			v.Add(field, "is the mask shown for a sensitive value; send the real value")
		default:
			if problem := headerValueProblem(f.Value); problem != "" {
				v.Add(field, problem)
			}
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b models.WebhookHeader) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out
}

// checkSensitiveNames checks that each sensitive name is one of the
// headers, once, and returns them lower-cased.
func checkSensitiveNames(fields []HeaderField, sensitive []string, v *models.Validation) map[string]bool {
	names := make(map[string]bool, len(fields))
	for _, f := range fields {
		names[strings.ToLower(f.Name)] = true
	}
	out := make(map[string]bool, len(sensitive))
	for i, s := range sensitive {
		field := "sensitiveHeaders[" + strconv.Itoa(i) + "]"
		lower := strings.ToLower(s)
		switch {
		case i == models.WebhookHeadersMax:
			v.Add("sensitiveHeaders", "must list at most "+strconv.Itoa(models.WebhookHeadersMax)+" names")
			return out
		case !names[lower]:
			v.Add(field, strconv.Quote(TruncateText(s, 64))+" is not one of the headers sent")
		case out[lower]:
			v.Add(field, strconv.Quote(s)+" is listed twice")
		}
		out[lower] = true
	}
	return out
}

func headerNameProblem(name string) string {
	switch {
	case name == "":
		return "is not a header name: a name has at least one character"
	case len(name) > models.WebhookHeaderNameMax:
		return "is too long: a header name is at most " + strconv.Itoa(models.WebhookHeaderNameMax) + " characters"
	case !httpguts.ValidHeaderFieldName(name):
		return "is not a header name: use letters, digits and !#$%&'*+-.^_`|~ (an RFC 9110 token)"
	}
	return ""
}

// refusedName says why a (lower-cased) name may not be set, or "".
func refusedName(lower string) string {
	if why, ok := refusedHeaders[lower]; ok {
		return why
	}
	return refusedPrefix(lower)
}

// headerValueProblem holds a value to printable ASCII (RFC 9110 §5.5 makes
// other bytes obsolete, and receivers may drop them) without surrounding
// whitespace, which receivers strip.
func headerValueProblem(s string) string {
	switch {
	case s == "":
		return "must not be empty; leave the header out instead"
	case len(s) > models.WebhookHeaderValueMax:
		return "must be at most " + strconv.Itoa(models.WebhookHeaderValueMax) + " characters"
	case strings.ContainsFunc(s, notHeaderValueRune):
		return "must be printable ASCII: letters, digits, punctuation, spaces and tabs; no CR, LF, NUL or other control characters"
	case s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t':
		return "must not start or end with a space or tab"
	}
	return ""
}

func notHeaderValueRune(r rune) bool { return !(r == '\t' || r >= ' ' && r <= '~') }

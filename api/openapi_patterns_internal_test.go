package api

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openlayer-ai/workspace-service/models"
)

// The patterns of api/openapi.json are checked here against the code that
// applies the same rules, on inputs around each rule's edges: a pattern
// may leave a rule to its description (it is looser), but it must never
// refuse what the service accepts. kin-openapi compiles patterns with Go's
// regexp, as here; they keep to what ECMA-262 reads the same way.

// schemaPattern compiles the pattern of a property of a component schema.
func schemaPattern(t *testing.T, doc *openapi3.T, schema, property string) *regexp.Regexp {
	t.Helper()
	s := doc.Components.Schemas[schema]
	if s == nil || s.Value.Properties[property] == nil {
		t.Fatalf("api/openapi.json has no %s.%s", schema, property)
	}
	p := s.Value.Properties[property].Value.Pattern
	if p == "" {
		t.Fatalf("%s.%s has no pattern", schema, property)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		t.Fatalf("%s.%s: %v", schema, property, err)
	}
	return re
}

// The url pattern admits every URL the service accepts, and refuses what it
// can say: another scheme, no host, credentials, whitespace, control
// characters before the fragment, a port other than 443 and 1024-65535 or
// one with a leading zero. Host names beyond that (DNS limits, IDNA,
// internal addresses) are the description's.
func TestOpenAPIWebhookURLPattern(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, schema := range []string{"CreateWebhookRequest", "UpdateWebhookRequest"} {
		re := schemaPattern(t, doc, schema, "url")
		accepts := func(raw string, allowPrivate bool) bool {
			var v models.Validation
			checkWebhookURL(raw, allowPrivate, &v)
			return v.Err() == nil
		}
		label63 := strings.Repeat("a", 63)
		for _, u := range []string{
			// TestWebhookHostsAccepted and the other tests' accepted URLs.
			"https://93.184.216.34/in",
			"https://93.184.216.34:8443/in",
			"https://[2606:2800:220:1:248:1893:25c8:1946]/in",
			"https://[2606:2800:220:1:248:1893:25c8:1946]:8443/in",
			"https://Hooks.Example.COM/in",
			"https://hooks.example.com./in",
			"https://b\u00fccher.example/in",
			"https://B\u00dcCHER.example/in",
			"https://xn--bcher-kva.example/in",
			"https://\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.example/in",
			"https://r3---sn-abc.googlevideo.com/in",
			"https://my_host.example.com/in",
			"https://" + strings.Repeat(label63+".", 3) + strings.Repeat("b", 61) + "/in",
			"https://hooks.example.com:443/in",
			"https://hooks.example.com:1024/in",
			"https://hooks.example.com:65535/in",
			"https://[::1]:8443/x",
			"https://[fe80::1%25eth0]:8443/x",
			"https://[fe80::1%25" + strings.Repeat("e", 15) + "]:8443/x",
			"https://[fe80::1%25br-1.a_b]:8443/x",
			"https://[fe80::1%25eth%30]:8443/x",
			"https://[::ffff:93.184.216.34]/in",
			"https://a.example.com",
			"https://example.com",
			// The scheme in any case, an empty port, query and fragment
			// without a path, '@' after the host, escapes, non-ASCII past
			// the host.
			"HTTPS://hooks.example.com/in",
			"HtTpS://hooks.example.com/in",
			"https://hooks.example.com:/in",
			"https://hooks.example.com:",
			"https://[2606:2800::1]:/in",
			"https://hooks.example.com?a=1",
			"https://hooks.example.com#f",
			"https://hooks.example.com/a@b?c@d#e@f",
			"https://b%C3%BCcher.example/in",
			"https://hooks.example.com/%C2%A0/\u00a0/\u2028?q=\u00e9",
			"https://1/",
			"https://999.1.1.1/",
			// url.Parse looks for control characters only before the
			// fragment, and so does the pattern.
			"https://hooks.example.com/in#x\x01y",
		} {
			if !accepts(u, true) {
				t.Errorf("the service refuses %q: it is no example of an accepted URL", u)
				continue
			}
			if !re.MatchString(u) {
				t.Errorf("%s.url's pattern refuses %q, which the service accepts", schema, u)
			}
		}
		for _, u := range []string{
			"", "http://hooks.example.com/in", "ftp://hooks.example.com/in", "https:hooks.example.com", "https:/hooks.example.com",
			"https:///in", "https://", "https://:8443/in", "https://?x", "https://[]/in",
			"https://user:pw@hooks.example.com/in", "https://token@hooks.example.com/in", "https://@hooks.example.com/in",
			"https://hooks.example.com/a b", "https://hooks.example.com/a\tb", "https://hooks.example.com/\x00", "https://hooks.example.com/\x7f",
			" https://hooks.example.com/in", "https://hooks.example.com/in\n", "https://hooks .example.com/in",
			"https://hooks.example.com:22/in", "https://hooks.example.com:0443/in", "https://hooks.example.com:01024/in",
			"https://hooks.example.com:65536/in", "https://hooks.example.com:99999/in", "https://hooks.example.com:+443/in",
			"https://hooks.example.com:443:443/in", "https://hooks.example.com:https/in",
			"https://2606:2800::1:8443/in", "https://hooks.example.com\\in", "https://ho'oks.example.com/in",
		} {
			if accepts(u, true) {
				t.Errorf("the service accepts %q: it is no example of a refused URL", u)
				continue
			}
			if re.MatchString(u) {
				t.Errorf("%s.url's pattern admits %q, which the service refuses for a rule the pattern states", schema, u)
			}
		}
		// Every port, as written: the pattern and validPort agree.
		for p := range 70000 {
			for _, port := range []string{strconv.Itoa(p), "0" + strconv.Itoa(p)} {
				u := "https://hooks.example.com:" + port + "/in"
				if got, want := re.MatchString(u), accepts(u, false); got != want {
					t.Errorf("%s.url's pattern on port %q: %v, the service %v", schema, port, got, want)
				}
			}
		}
	}
}

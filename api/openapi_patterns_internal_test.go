package api

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
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
// can say: another scheme, no host, credentials, a space or an ASCII
// control character anywhere, a port other than 443 and 1024-65535 or
// one with a leading zero, brackets around anything but an IPv6 literal. Host names beyond that (DNS limits, IDNA,
// internal addresses) are the description's.
func TestOpenAPIWebhookURLPattern(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, schema := range []string{"CreateWebhookRequest", "UpdateWebhookRequest"} {
		re := schemaPattern(t, doc, schema, "url")
		accepts := func(raw string, allowPrivate bool) bool {
			var v models.Validation
			webhookops.CheckURL(raw, allowPrivate, &v)
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
			// Control characters in the fragment, which url.Parse lets
			// through and PostgreSQL would drop a NUL of.
			"https://hooks.example.com/in#x\x01y", "https://hooks.example.com/in#a\x00b", "https://hooks.example.com/in#\x7f",
			"https://hooks.example.com/in#a b",
			// Brackets hold an IPv6 literal only: one colon at least.
			"HTTPS://[0]", "https://[0]/in", "https://[1.2.3.4]/in", "https://[123]:8443/in",
		} {
			if accepts(u, true) {
				t.Errorf("the service accepts %q: it is no example of a refused URL", u)
				continue
			}
			if re.MatchString(u) {
				t.Errorf("%s.url's pattern admits %q, which the service refuses for a rule the pattern states", schema, u)
			}
		}
		// Every port, as written: the pattern and webhookops.ValidPort agree.
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

// The expiresAt pattern reads exactly the forms parseExpiry does (RFC 3339
// with or without the offset, the fraction after '.' or ',', each field in
// range, Go's one-digit hour and offsets up to ±24:60 included), but for
// February 29 of a year that is not a leap year, which its description
// states.
func TestOpenAPIExpiresAtPattern(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, schema := range []string{"CreateApiKeyRequest", "RotateApiKeyRequest"} {
		re := schemaPattern(t, doc, schema, "expiresAt")
		check := func(s string) {
			t.Helper()
			_, err := parseExpiry(s)
			want := err == nil
			if !want && february29(s) {
				want = true // a year that is not a leap year: the description's rule
			}
			if got := re.MatchString(s); got != want {
				t.Errorf("%s.expiresAt's pattern on %q: %v; parseExpiry: %v", schema, s, got, err)
			}
		}
		two := func(n int) string { return strconv.Itoa(n/10) + strconv.Itoa(n%10) }
		for _, y := range []string{"2030", "2028", "2100", "2000", "0000", "9999", "203", "20300", "+2030"} {
			for m := range 15 {
				for day := range 34 {
					for _, tail := range []string{"T12:00:00Z", "T12:00:00"} {
						check(y + "-" + two(m) + "-" + two(day) + tail)
					}
				}
			}
			check(y + "-1-31T12:00:00Z")
			check(y + "-01-1T12:00:00Z")
		}
		for _, hh := range []string{"0", "2", "9", "00", "09", "12", "19", "23", "24", "29", "002", ""} {
			for _, mm := range []string{"00", "05", "59", "60", "5", "99"} {
				for _, ss := range []string{"00", "59", "60", "5", "61"} {
					for _, frac := range []string{"", ".5", ",5", ".123456789012", ".", ",", ".x"} {
						for _, off := range []string{"", "Z", "z", "+02:00", "-02:00", "+00:00", "-00:00", "+23:59", "+24:00", "-24:60", "+24:59",
							"+25:00", "+00:61", "+0200", "+02", "+2:00", "02:00", " Z", "Z "} {
							check("2030-01-31T" + hh + ":" + mm + ":" + ss + frac + off)
						}
					}
				}
			}
		}
		for _, s := range []string{"", "2030-01-31", "2030-01-31 12:00:00Z", "2030-01-31t12:00:00Z", "2030-01-31T12:00Z", "2030-01-31T12:00", " 2030-01-31T12:00:00Z", "2030-01-31T12:00:00Z\n"} {
			check(s)
		}
	}
}

// february29 reports whether s starts with February 29 of a four-digit year
// that is not a leap year.
func february29(s string) bool {
	y, err := strconv.Atoi(s[:min(4, len(s))])
	return err == nil && len(s) > 11 && s[0] != '+' && s[4:11] == "-02-29T" && (y%4 != 0 || y%100 == 0 && y%400 != 0)
}

// Every string member the handlers refuse NUL in says so with a pattern,
// and the project name's pattern is "not blank" as strings.TrimSpace reads
// it: white space is unicode.IsSpace's, not Go's \s (ASCII only) nor
// ECMA-262's \s (which differs), so the pattern lists it.
func TestOpenAPINoNULPatterns(t *testing.T) {
	doc := loadOpenAPI(t)
	res := map[string]*regexp.Regexp{}
	for _, f := range [][2]string{
		{"CreateProjectRequest", "name"}, {"CreateProjectRequest", "description"},
		{"CreateApiKeyRequest", "name"}, {"UpdateApiKeyRequest", "name"},
		{"CreateWebhookRequest", "description"}, {"UpdateWebhookRequest", "description"},
		{"UpdateWorkspaceRequest", "name"}, {"UpdateWorkspaceRequest", "inviteCode"},
	} {
		res[f[0]+"."+f[1]] = schemaPattern(t, doc, f[0], f[1])
	}
	param := doc.Components.Parameters["name"]
	if param == nil || param.Value.Schema.Value.Pattern == "" {
		t.Fatal("the query parameter name has no pattern")
	}
	res["parameter name"] = regexp.MustCompile(param.Value.Schema.Value.Pattern)
	for field, re := range res {
		for _, s := range []string{"a", "a b", "a\nb\tc", "\u00e9\u2192\U0001F600", "\x01\x7f"} {
			if !re.MatchString(s) {
				t.Errorf("%s's pattern refuses %q", field, s)
			}
		}
		for _, s := range []string{"\x00", "a\x00", "\x00b", "a\nb\x00c"} {
			if re.MatchString(s) {
				t.Errorf("%s's pattern admits %q", field, s)
			}
		}
	}
	name := res["CreateProjectRequest.name"]
	// A workspace name is trimmed and refused blank as a project name is.
	if res["UpdateWorkspaceRequest.name"].String() != name.String() {
		t.Errorf("UpdateWorkspaceRequest.name's pattern differs from CreateProjectRequest.name's")
	}
	check := func(s string) {
		t.Helper()
		if got, want := name.MatchString(s), strings.TrimSpace(s) != "" && !hasNUL(s); got != want {
			t.Errorf("CreateProjectRequest.name's pattern on %q: %v, the service %v", s, got, want)
		}
	}
	for r := rune(0); r <= 0x3100; r++ {
		check(string(r))
		check(" " + string(r) + "\u3000")
	}
	for _, s := range []string{"", "\ufeff", "\u200b", "\U0010FFFF", "a\x00", " \x00 ", " \u00a0\u0085\v"} {
		check(s)
	}
}

// A publish's data with U+0000 in a string or a member name, at any depth,
// breaks the document's schema, as the service refuses it (jsonb cannot
// store it: TestPublishEventBadRequests); data without one keeps to it.
// Read by a JSON Schema 2020-12 validator, as clients' tools would; the
// contract test (kin-openapi) sends such requests as well.
func TestOpenAPIEventDataWithoutNul(t *testing.T) {
	var doc any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("openapi.json#/components/schemas/PublishEventRequest")
	if err != nil {
		t.Fatal(err)
	}
	for body, ok := range map[string]bool{
		`{"type":"test.created","data":{"a":"b","n":[1,"x",{"k":null}],"t":true}}`: true,
		`{"type":"test.created","data":{"a":"b\u0000"}}`:                           false,
		`{"type":"test.created","data":{"a\u0000":"b"}}`:                           false,
		`{"type":"test.created","data":{"a":[{"b":["\u0000"]}]}}`:                  false,
		`{"type":"test.created","data":{"a":{"b\u0000c":1}}}`:                      false,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); (err == nil) != ok {
			t.Errorf("%s: schema says %v, want valid %v", body, err, ok)
		}
	}
}

package api

import (
	"regexp"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// The custom headers' patterns say what webhookops.CheckHeaders does to
// one header: a name is a token of at most 128 characters and none of the
// refused names, in any case; a value is 1 to 1024 printable ASCII
// characters without a space or tab at either end.
func TestOpenAPIHeaderPatterns(t *testing.T) {
	doc := loadOpenAPI(t)
	s := doc.Components.Schemas["WebhookHeadersIn"]
	if s == nil || s.Value.PropertyNames == nil || s.Value.PropertyNames.Value.Not == nil || s.Value.AdditionalProperties.Schema == nil {
		t.Fatal("api/openapi.json has no WebhookHeadersIn with propertyNames, its not, and additionalProperties")
	}
	names := s.Value.PropertyNames.Value
	token := regexp.MustCompile(names.Pattern)
	refused := regexp.MustCompile(names.Not.Value.Pattern)
	value := regexp.MustCompile(s.Value.AdditionalProperties.Schema.Value.Pattern)
	service := func(name, val string) bool {
		var v models.Validation
		webhookops.CheckHeaders([]webhookops.HeaderField{{Name: name, Value: val}}, nil, false, &v)
		return v.Err() == nil
	}

	candidates := []string{"X-Api-Key", "Authorization", "Cookie", "x", "X_Y", "!#$%&'*+-.^_`|~09azAZ",
		"Host", "HOST", "host", "Hostname", "X-Host", "Content-Type", "content-length", "Content", "Contents-X",
		"Webhook-Id", "webhook-signature", "Webhook", "Webhooks-X", "Traceparent", "tracestate", "Tracestates",
		"Connection", "keep-alive", "Proxy-Authenticate", "proxy-authorization", "Proxy-Connection", "TE", "te", "Tea",
		"Trailer", "Trailers", "Transfer-Encoding", "Upgrade", "User-Agent", "Accept-Encoding", "Accept", "Expect", "Expects",
		"X Y", "X:Y", "X\tY", "X\x00", "é", "X-(", "", strings.Repeat("x", 128), strings.Repeat("x", 129)}
	for _, n := range candidates {
		doc := token.MatchString(n) && !refused.MatchString(n) && len(n) >= 1 && len(n) <= 128
		if got := service(n, "v"); got != doc {
			t.Errorf("name %q: the service accepts it %v, the document %v", n, got, doc)
		}
	}

	values := []string{"v", "a b", "a\tb", "~!", " a", "a ", "\ta", "a\t", "a\r\nb", "a\nb", "a\x00", "\x7f", "é", "",
		strings.Repeat("v", 1024), strings.Repeat("v", 1025)}
	for b := 0; b < 256; b++ {
		values = append(values, "a"+string(rune(b))+"a")
	}
	for _, val := range values {
		doc := value.MatchString(val) && len(val) <= 1024
		if got := service("X-A", val); got != doc {
			t.Errorf("value %q: the service accepts it %v, the document %v", val, got, doc)
		}
	}
}

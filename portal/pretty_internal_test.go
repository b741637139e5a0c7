package portal

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A deeply nested event is shown as sent, at once, not indented: its
// indented form grows with the square of the depth (about 200 MB at
// 10,000 levels, built on every view before the hostile test; 13 s and 2
// GB for four views). Shallow bodies are indented exactly as json.Indent
// does; the bound is an upper bound (it never admits a body whose indented
// form is larger) and not far above (it admits ordinary bodies within
// twice their indented size).
func TestPrettyBoundsIndentation(t *testing.T) {
	deep := []byte(`{"a":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`)
	start := time.Now()
	text, cut := pretty(deep)
	if took := time.Since(start); took > time.Second {
		t.Errorf("pretty of a 20 KB body nested 9,990 deep took %v", took)
	}
	if text != string(deep) || cut {
		t.Errorf("the deep body is not shown as sent (%d bytes, cut %v)", len(text), cut)
	}

	for _, body := range []string{
		`{"testId":"t-1","nested":{"list":[1,2,{"x":"a,b:[{"}],"empty":{},"none":[]},"s":"q\"uote\\"}`,
		`[` + strings.Repeat(`{"k":[1,2,3]},`, 500) + `{}]`,
		strings.Repeat("[", 60) + strings.Repeat("]", 60),
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(body), "", "  "); err != nil {
			t.Fatal(err)
		}
		if indentedWithin([]byte(body), want.Len()-1) {
			t.Errorf("the bound admits %d bytes within %d that json.Indent writes in %d", len(body), want.Len()-1, want.Len())
		}
		if !indentedWithin([]byte(body), 2*want.Len()) {
			t.Errorf("the bound refuses %d bytes within twice the %d json.Indent writes", len(body), want.Len())
		}
		if got, _ := pretty([]byte(body)); want.Len() <= payloadShown && got != want.String() {
			t.Errorf("pretty(%.40s…) is not json.Indent's", body)
		}
	}
}

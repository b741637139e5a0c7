package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/openlayer-ai/workspace-service/models"
)

const maxBodyBytes = 1 << 20

var (
	errTooLarge      = errors.New("request body is larger than 1 MiB")
	errUnsupportedCT = errors.New("Content-Type must be application/json")
)

// decode reads one JSON object from the body into the struct dst.
func decode(r *http.Request, dst any) error { return decodeRequest(r, dst, false) }

// decodeOptionalBody is decode for requests whose members are all optional:
// an empty body and null (the TypeScript SDK's null argument) read as {}.
func decodeOptionalBody(r *http.Request, dst any) error { return decodeRequest(r, dst, true) }

func decodeRequest(r *http.Request, dst any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errUnsupportedCT
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errTooLarge
		}
		return invalidJSON("the request body could not be read")
	}
	if trimmed := bytes.TrimSpace(body); optional && (len(trimmed) == 0 || string(trimmed) == "null") {
		return nil
	}
	return decodeObject(body, dst)
}

// decodeObject decodes a JSON object into the struct dst member by member:
// unlike encoding/json, a name must match its tag exactly and appear once,
// invalid UTF-8 is refused, and every bad member is reported at once.
func decodeObject(body []byte, dst any) error {
	body = bytes.TrimSpace(body)
	switch {
	case len(body) == 0:
		return invalidJSON("the request body is empty; send a JSON object")
	case !utf8.Valid(body):
		return invalidJSON("the body is not valid UTF-8")
	case !json.Valid(body):
		return syntaxError(json.Unmarshal(body, new(json.RawMessage)))
	case body[0] != '{':
		return invalidJSON("the body must be a JSON object")
	}
	target := reflect.ValueOf(dst).Elem()
	fields := jsonFields(target.Type())
	dec := json.NewDecoder(bytes.NewReader(body))
	// The body is valid JSON, so these reads cannot fail.
	_, _ = dec.Token() // {
	seen := map[string]bool{}
	var v models.Validation
	for dec.More() {
		tok, _ := dec.Token()
		name, _ := tok.(string)
		var raw json.RawMessage
		_ = dec.Decode(&raw)
		field, known := fields[name]
		switch {
		case seen[name]:
			v.Add(name, "appears more than once")
		case !known:
			v.Add(name, "unknown field")
		default:
			if err := json.Unmarshal(raw, target.Field(field).Addr().Interface()); err != nil {
				v.Add(name, "must be "+describe(target.Type().Field(field).Type))
			}
		}
		seen[name] = true
	}
	return v.Err()
}

func syntaxError(err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return invalidJSON(fmt.Sprintf("malformed JSON at byte %d", syntax.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidJSON("the JSON body ends unexpectedly")
	default:
		return invalidJSON("the body is not valid JSON")
	}
}

var fieldIndexes sync.Map // reflect.Type -> map[string]int (field index by JSON name)

func jsonFields(t reflect.Type) map[string]int {
	if m, ok := fieldIndexes.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			m[name] = i
		}
	}
	fieldIndexes.Store(t, m)
	return m
}

// describe names the JSON a Go field accepts, for type errors.
func describe(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		if v, ok := t.FieldByName("Value"); ok { // Optional[T]
			return describe(v.Type) + ", or null"
		}
		return "an object"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// encoding/json takes 7, not 7.0, 7e0 or a value past the type's
		// range: say so, rather than "a number" to someone who sent one.
		return "a whole number in range, written without a fraction or exponent"
	default:
		return "a number"
	}
}

func invalidJSON(msg string) error {
	return &models.Error{Kind: models.ErrInvalid, Code: "invalid_json", Message: msg}
}

func (s *Server) writeDecodeError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errTooLarge):
		s.writeStatus(w, r, http.StatusRequestEntityTooLarge, err.Error())
	case errors.Is(err, errUnsupportedCT):
		s.writeStatus(w, r, http.StatusUnsupportedMediaType, err.Error())
	default:
		s.writeError(w, r, err)
	}
}

// Optional distinguishes a JSON member that is absent from one that is null,
// which matters where the spec gives the two different meanings.
type Optional[T any] struct {
	Set   bool // the member was present
	Valid bool // present and not null
	Value T
}

// UnmarshalJSON is called only for members that are present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, &o.Value); err != nil {
		return err
	}
	o.Valid = true
	return nil
}

package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/openlayer-ai/workspace-service/models"
)

// maxBodyBytes caps every request body.
const maxBodyBytes = 1 << 20

var (
	errTooLarge      = errors.New("request body is larger than 1 MiB")
	errUnsupportedCT = errors.New("Content-Type must be application/json")
)

// decode reads one JSON object from the body into dst, strictly: unknown
// fields, trailing data and wrong types are errors that name the problem.
func decode(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errUnsupportedCT
		}
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errTooLarge
		}
		return invalidJSON("the body must hold a single JSON object")
	}
	return nil
}

func decodeError(err error) error {
	var (
		mbe    *http.MaxBytesError
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return errTooLarge
	case errors.Is(err, io.EOF):
		return invalidJSON("the request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidJSON("the JSON body ends unexpectedly")
	case errors.As(err, &syntax):
		return invalidJSON(fmt.Sprintf("malformed JSON at byte %d", syntax.Offset))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return invalidJSON("the body must be a JSON object")
		}
		return models.Invalid(typ.Field, "must be of type "+jsonType(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return models.Invalid(field, "unknown field")
	default:
		return invalidJSON("the body is not valid JSON")
	}
}

func invalidJSON(msg string) error {
	return &models.Error{Kind: models.ErrInvalid, Code: "invalid_json", Message: msg}
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	default:
		return "number"
	}
}

// writeDecodeError answers a failed decode with the status it deserves.
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

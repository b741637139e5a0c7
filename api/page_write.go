package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/openlayer-ai/workspace-service/models"
)

// writePage writes the bytes writeJSON would, encoding one item at a time:
// writeJSON's buffer and copy are several times a page of large events.
// A page whose envelope or first item cannot be encoded is a 500; a later
// item that cannot be (stored rows never are) aborts the connection rather
// than send a truncated 200.
func writePage[T any](w http.ResponseWriter, status int, page models.Page[T]) {
	meta, err := json.Marshal(page.Meta)
	if err != nil {
		writeJSON(w, status, page)
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // escapes HTML as json.Marshal does
	encode := func(v T) ([]byte, error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	var first []byte
	if len(page.Items) > 0 {
		if first, err = encode(page.Items[0]); err != nil {
			writeJSON(w, status, page)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The field names and order of models.Page's tags; a test compares the
	// bytes with json.Marshal's.
	if _, err := w.Write(append(append([]byte(`{"_meta":`), meta...), `,"items":`...)); err != nil {
		return
	}
	if page.Items == nil {
		_, _ = w.Write([]byte("null}\n"))
		return
	}
	sep := []byte{'['}
	for i := range page.Items {
		b := first
		if i > 0 {
			if b, err = encode(page.Items[i]); err != nil {
				panic(http.ErrAbortHandler)
			}
		}
		if _, err := w.Write(sep); err != nil {
			return
		}
		if _, err := w.Write(b); err != nil {
			return
		}
		sep[0] = ','
	}
	if len(page.Items) == 0 {
		_, _ = w.Write(sep)
	}
	_, _ = w.Write([]byte("]}\n"))
}

package api

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/models"
)

// Pagination bounds shared by every list endpoint.
const (
	defaultPerPage = 25
	maxPerPage     = 100
)

// query parses the query string strictly. r.URL.Query() silently drops a
// malformed pair (a stray ';' or '%zz'), which would quietly drop a filter
// and answer with more than was asked for.
func query(r *http.Request, v *models.Validation) url.Values {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		v.Add("query", "is malformed: send name=value pairs joined by & and percent-encoded")
	}
	return q
}

// pageParams reads page (>= 1, default 1) and perPage (1..100, default 25).
func pageParams(q url.Values, v *models.Validation) models.PageRequest {
	return models.PageRequest{
		Page:    intParam(q, "page", 1, 1, 1<<31-1, v),
		PerPage: intParam(q, "perPage", defaultPerPage, 1, maxPerPage, v),
	}
}

func intParam(q url.Values, name string, def, lo, hi int, v *models.Validation) int {
	raw, ok := q[name]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(raw[0])
	if err != nil || n < lo || n > hi || len(raw) > 1 {
		v.Add(name, "must be one integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
		return def
	}
	return n
}

// pathID reads a uuid path variable. A malformed id cannot name anything,
// so it reads as not found.
func pathID(r *http.Request, name, resource string) (uuid.UUID, error) {
	id, ok := parseID(mux.Vars(r)[name])
	if !ok {
		return uuid.Nil, models.NotFound(resource)
	}
	return id, nil
}

// parseID accepts only the canonical 36-character form (either case):
// uuid.Parse also takes urn:uuid:, braced and unhyphenated spellings, which
// would give one resource many paths.
func parseID(s string) (uuid.UUID, bool) {
	if len(s) != 36 {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

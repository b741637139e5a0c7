package api

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/openlayer-ai/workspace-service/models"
)

// Grace period bounds, in the two units rotate accepts.
var (
	maxGraceHours   = int64(models.MaxGracePeriod / time.Hour)
	maxGraceSeconds = int64(models.MaxGracePeriod / time.Second)
)

type createAPIKeyRequest struct {
	Name      *string          `json:"name"`
	ExpiresAt Optional[string] `json:"expiresAt"`
}

// validate applies the spec's rules. Omitted expiresAt inherits the calling
// key's expiry; null means never, which a key that expires may not grant.
func (req createAPIKeyRequest) validate(p models.Principal, now time.Time) (models.NewAPIKey, error) {
	var v models.Validation
	checkKeyName(req.Name, &v)
	in := models.NewAPIKey{WorkspaceID: p.WorkspaceID, UserID: p.UserID, Name: req.Name, ExpiresAt: p.KeyExpiresAt, Now: now}
	if req.ExpiresAt.Set {
		in.ExpiresAt = checkExpiry(req.ExpiresAt, now, p.KeyExpiresAt, &v)
	}
	return in, v.Err()
}

type updateAPIKeyRequest struct {
	Name Optional[string] `json:"name"`
	// ExpiresAt is accepted only to be refused with a useful message
	// instead of "unknown field".
	ExpiresAt Optional[json.RawMessage] `json:"expiresAt"`
}

// validate reads the update, whose members are all optional (the SDKs send
// {}): rename reports whether the name changes, and name is the new one.
func (req updateAPIKeyRequest) validate() (rename bool, name *string, err error) {
	var v models.Validation
	if req.ExpiresAt.Set {
		v.Add("expiresAt", "cannot be changed by an update; rotate the key instead "+
			"(POST /v1/workspaces/{workspaceId}/api-keys/{apiKeyId}/rotate with the new expiresAt)")
	}
	if req.Name.Valid {
		name = &req.Name.Value
		checkKeyName(name, &v)
	}
	return req.Name.Set, name, v.Err()
}

type rotateAPIKeyRequest struct {
	ExpiresAt          Optional[string] `json:"expiresAt"`
	GracePeriodHours   *float64         `json:"gracePeriodHours"`
	GracePeriodSeconds *float64         `json:"gracePeriodSeconds"`
}

// validate reads the rotation. Omitted expiresAt keeps the key's expiry,
// which the store checks against MaxExpiresAt under the row lock: a key that
// expires cannot mint a secret that outlives it.
func (req rotateAPIKeyRequest) validate(p models.Principal, now time.Time) (models.APIKeyRotation, error) {
	var v models.Validation
	rot := models.APIKeyRotation{Now: now, MaxExpiresAt: p.KeyExpiresAt}
	if req.ExpiresAt.Set {
		rot.SetExpiry = true
		rot.ExpiresAt = checkExpiry(req.ExpiresAt, now, p.KeyExpiresAt, &v)
	}
	switch {
	case req.GracePeriodHours != nil && req.GracePeriodSeconds != nil:
		v.Add("gracePeriodSeconds", "send either gracePeriodHours or gracePeriodSeconds, not both")
	case req.GracePeriodHours != nil:
		rot.Grace = time.Duration(wholeNumber(*req.GracePeriodHours, "gracePeriodHours", maxGraceHours, &v)) * time.Hour
	case req.GracePeriodSeconds != nil:
		rot.Grace = time.Duration(wholeNumber(*req.GracePeriodSeconds, "gracePeriodSeconds", maxGraceSeconds, &v)) * time.Second
	}
	return rot, v.Err()
}

func checkKeyName(name *string, v *models.Validation) {
	switch {
	case name == nil:
	case utf8.RuneCountInString(*name) > models.APIKeyNameMax:
		v.Add("name", "must be at most "+strconv.Itoa(models.APIKeyNameMax)+" characters")
	case hasNUL(*name):
		v.Add("name", noNUL)
	}
}

// maxExpiryYear is the last year an RFC 3339 date-time can name.
const maxExpiryYear = 9999

// localDateTime is a date-time without an offset, read as UTC: the Python
// SDK sends a naive datetime's isoformat().
const localDateTime = "2006-01-02T15:04:05.999999999"

const expiryForms = "must be an ISO 8601 date-time: RFC 3339 with an offset such as 2030-01-31T12:00:00Z " +
	"or 2030-01-31T12:00:00+02:00, or without an offset (read as UTC) such as 2030-01-31T12:00:00.000000"

// parseExpiry reads an RFC 3339 instant or, failing that, a date-time
// without an offset as UTC.
func parseExpiry(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		// time.Parse gives UTC to a layout without a zone.
		if local, lerr := time.Parse(localDateTime, s); lerr == nil {
			return local, nil
		}
	}
	return t, err
}

// checkExpiry reads a present expiresAt: null (never) or a future instant.
// A caller whose key expires may grant neither null nor a later instant.
func checkExpiry(o Optional[string], now time.Time, caller *time.Time, v *models.Validation) *time.Time {
	if !o.Valid {
		if caller != nil {
			v.Add("expiresAt", "cannot be null (never expires) because the calling key expires at "+
				caller.UTC().Format(time.RFC3339)+"; send an instant no later than that")
		}
		return nil
	}
	t, err := parseExpiry(o.Value)
	switch {
	case err != nil:
		v.Add("expiresAt", expiryForms)
		return nil
	case !t.After(now):
		v.Add("expiresAt", "must be in the future")
	case t.UTC().Year() > maxExpiryYear:
		// Past year 9999 an instant has no RFC 3339 form to be returned in.
		v.Add("expiresAt", "must be before the year 10000 (in UTC)")
	case caller != nil && t.After(*caller):
		v.Add("expiresAt", "cannot be later than the calling key's expiry, "+caller.UTC().Format(time.RFC3339Nano))
	}
	return &t
}

func wholeNumber(x float64, field string, hi int64, v *models.Validation) int64 {
	if x < 0 || x > float64(hi) || x != math.Trunc(x) {
		v.Add(field, "must be a whole number from 0 to "+strconv.FormatInt(hi, 10)+" (the grace period is at most 30 days)")
		return 0
	}
	return int64(x)
}

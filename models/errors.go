// Package models holds the service's domain types, shaped as the API returns
// them, and the sentinel errors each layer translates into.
package models

import (
	"errors"
	"strconv"
	"strings"
)

// Error kinds. Match them with errors.Is.
var (
	ErrInvalid         = errors.New("invalid request")
	ErrUnauthenticated = errors.New("unauthenticated")
	ErrForbidden       = errors.New("forbidden")
	ErrNotFound        = errors.New("not found")
	ErrConflict        = errors.New("conflict")
	ErrUnavailable     = errors.New("unavailable")
)

// FieldError names one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is a domain error with a stable code and a message safe to show.
type Error struct {
	Kind    error
	Code    string
	Message string
	Details []FieldError
}

func (e *Error) Error() string { return e.Message }

// Unwrap makes errors.Is(err, models.ErrNotFound) and friends work.
func (e *Error) Unwrap() error { return e.Kind }

// NotFound reports that a resource does not exist or is not visible to the
// caller; both read the same so existence never leaks across workspaces.
func NotFound(resource string) *Error {
	return &Error{Kind: ErrNotFound, Code: "not_found", Message: resource + " not found"}
}

// Conflict reports a request that clashes with the current state.
func Conflict(code, message string) *Error {
	return &Error{Kind: ErrConflict, Code: code, Message: message}
}

// Forbidden reports an authenticated caller without the needed role.
func Forbidden(message string) *Error {
	return &Error{Kind: ErrForbidden, Code: "forbidden", Message: message}
}

// maxFieldErrors keeps an error's details from dwarfing the request.
const maxFieldErrors = 20

// Validation collects field errors while a request is checked.
type Validation struct {
	details []FieldError
	dropped int
}

// Add records a problem with one field.
func (v *Validation) Add(field, message string) {
	if len(v.details) == maxFieldErrors {
		v.dropped++
		return
	}
	v.details = append(v.details, FieldError{field, message})
}

// Err returns nil when nothing was added, else an ErrInvalid listing them all.
func (v *Validation) Err() error {
	if len(v.details) == 0 {
		return nil
	}
	msgs := make([]string, len(v.details), len(v.details)+1)
	for i, d := range v.details {
		msgs[i] = d.Field + ": " + d.Message
	}
	if v.dropped > 0 {
		msgs = append(msgs, "and "+strconv.Itoa(v.dropped)+" more")
	}
	return &Error{Kind: ErrInvalid, Code: "validation_failed", Message: strings.Join(msgs, "; "), Details: v.details}
}

// Invalid is a single-field validation error.
func Invalid(field, message string) error {
	var v Validation
	v.Add(field, message)
	return v.Err()
}

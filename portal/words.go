package portal

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// fieldLabels are the forms' labels of the fields the shared rules name:
// a person reads "Rate limit", not the API's rateLimitPerSecond.
var fieldLabels = map[string]string{
	"url":                "Endpoint URL",
	"description":        "Description",
	"eventTypes":         "Event types",
	"rateLimitPerSecond": "Rate limit",
	"enabled":            "Enabled",
	"gracePeriodHours":   "Keep the current secret signing for",
	"since":              "Since",
	"status":             "Outcome",
	"eventId":            "Event id",
	"endpoint":           "Endpoint",
	"type":               "Event type",
	"until":              "Until",
}

// fieldLabel is a message's field as its form labels it; eventTypes[1]
// is about the event types.
func fieldLabel(field string) string {
	name, _, _ := strings.Cut(field, "[")
	if l, ok := fieldLabels[name]; ok {
		return l
	}
	return name
}

// plainMessage rewrites what the shared rules say in the API's terms.
func plainMessage(msg string) string {
	return strings.NewReplacer(", or null for no limit", ", or empty for no limit").Replace(msg)
}

// plainError is the title and text an error page shows for a models error
// of a known code, in the words of the pages rather than of the API.
type plainError struct{ Title, Message string }

var plainErrors = map[string]plainError{
	"webhook_disabled": {"The endpoint is disabled",
		"This endpoint is disabled, so nothing is sent to it: test events, redeliveries and recoveries wait until it is enabled. Enable it on the endpoint's page, then try again."},
	"recovery_running": {"A recovery is already running",
		"A recovery of this endpoint is running. Its progress is on the endpoint's page; start another once it has finished."},
	"event_not_dispatched": {"Not sent yet",
		"This event's first delivery has not started yet. Wait for its first attempt to show, then redeliver it if it failed."},
	"delivery_not_found": {"Not found",
		"This event was not sent to this endpoint, so it cannot be redelivered to it."},
	"webhook_secrets_unavailable": {"Try again later",
		"The service cannot make signing secrets right now. Nothing was changed; ask the people who run the service."},
}

// notFoundMessages name what a page or form referred to.
var notFoundMessages = map[string]string{
	"webhook subscription not found": "This endpoint does not exist in this workspace: it may have been deleted.",
	"event not found":                "This event does not exist in this workspace, or its records have been deleted.",
}

// statusTitles are the error pages' headings by status.
var statusTitles = map[int]string{
	http.StatusBadRequest:          "Check what you entered",
	http.StatusForbidden:           "Not allowed",
	http.StatusNotFound:            "Not found",
	http.StatusMethodNotAllowed:    "Not a page",
	http.StatusConflict:            "This cannot be done now",
	http.StatusServiceUnavailable:  "Try again shortly",
	http.StatusInternalServerError: "Something went wrong",
}

// describeError is the title and message of an error page for a models error.
func describeError(status int, me *models.Error) (title, msg string) {
	title = statusTitles[status]
	if title == "" {
		title = http.StatusText(status)
	}
	if pe, ok := plainErrors[me.Code]; ok {
		return pe.Title, pe.Message
	}
	if m, ok := notFoundMessages[me.Message]; ok && errors.Is(me, models.ErrNotFound) {
		return title, m
	}
	if len(me.Details) > 0 {
		parts := make([]string, len(me.Details))
		for i, d := range me.Details {
			parts[i] = fieldLabel(d.Field) + ": " + plainMessage(d.Message)
		}
		return title, strings.Join(parts, ". ") + "."
	}
	return title, sentence(me.Message)
}

// sentence starts a message with a capital and ends it with a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// inWords is a span as a person says it: "7 days", "24 hours", "5 minutes".
func inWords(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.FormatInt(n, 10) + " " + one + "s"
	}
	d = d.Round(time.Minute) // a span read a moment after it was set
	switch {
	case d <= 0:
		return "no time"
	case d >= 48*time.Hour && d%(24*time.Hour) == 0, d >= 72*time.Hour:
		return unit(int64((d+12*time.Hour)/(24*time.Hour)), "day")
	case d >= time.Hour:
		return unit(int64((d+30*time.Minute)/time.Hour), "hour")
	default:
		return unit(max(1, int64((d+30*time.Second)/time.Minute)), "minute")
	}
}

package workflows

import (
	"strconv"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/activities"
)

// attemptSummary reads "attempt 2 → hooks.example.com": the host an
// earlier attempt to the subscription reported (only the host: a URL's
// path or query may carry a token), or the subscription's id before any
// did. The attempt's result names the host it went to.
func attemptSummary(n int, host string, subID uuid.UUID) string {
	to := summaryHost(host)
	if to == "" {
		to = "subscription " + subID.String()
	}
	return "attempt " + strconv.Itoa(n) + " → " + to
}

// summaryHost is a host as the Web UI may show it (activities.DisplayHost).
// A summary is not part of a command's identity, so changing its text
// changes no replay.
func summaryHost(host string) string { return activities.DisplayHost(host) }

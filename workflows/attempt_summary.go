package workflows

import (
	"strconv"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/activities"
)

// attemptSummary reads "attempt 2 → hooks.example.com": the host only (a
// URL's path or query may carry a token), or the subscription before any.
func attemptSummary(n int, host string, subID uuid.UUID) string {
	to := summaryHost(host)
	if to == "" {
		to = "subscription " + subID.String()
	}
	return "attempt " + strconv.Itoa(n) + " → " + to
}

// summaryHost is a host as the Web UI may show it. Summaries are not part
// of a command's identity, so their text may change without breaking replay.
func summaryHost(host string) string { return activities.DisplayHost(host) }

package reliability

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"
)

// rssGrowthLimitMiB is how much the worker's resident memory may grow
// while it talks to hostile receivers.
const rssGrowthLimitMiB = 100

// scenarioHostile: receivers that answer a 50 MB body (with a 500), stall
// 60 s before their headers, redirect to themselves, reset the connection,
// or present a certificate nobody trusts. Every attempt must be recorded as
// a failure with a non-empty errorMessage, and the worker's memory must
// stay flat.
func scenarioHostile(t *testing.T, h *harness) tally {
	ctx := context.Background()
	c := h.workspace(t, "f-hostile-receivers")
	subs := h.subscribe(t, c, h.rc, expectFailure,
		addEndpoint(h.rc, answerHugeBody, 0),
		addEndpoint(h.rc, answerStall, 60*time.Second),
		addEndpoint(h.rc, answerRedirect, 0),
		addEndpoint(h.rc, answerReset, 0))
	subs = append(subs, h.subscribe(t, c, h.untrusted, expectFailure, addEndpoint(h.untrusted, answerOK, 0))...)

	before, err := h.st.Worker.RSSMiB()
	if err != nil {
		t.Fatal(err)
	}
	p := &publisher{c: c}
	p.burst(ctx, h.sc.hostileEvents, 2)
	if r := p.refusals(); len(r) > 0 {
		h.failf(t, "%d events not accepted, e.g. %s", len(r), r[0])
	}
	res := h.settle(t, subs, p.ids())
	after, err := h.st.Worker.RSSMiB()
	if err != nil {
		t.Fatal(err)
	}
	h.notef(t, "worker RSS %.1f MiB before, %.1f MiB after (%+.1f MiB)", before, after, after-before)
	if after-before > rssGrowthLimitMiB {
		h.failf(t, "worker RSS grew by %.1f MiB talking to hostile receivers, limit %d MiB", after-before, rssGrowthLimitMiB)
	}
	for _, s := range subs {
		msgs, err := errorMessages(ctx, h.st.DB, s.id)
		if err != nil {
			h.failf(t, "%v", err)
			continue
		}
		h.notef(t, "%s: errorMessage %q", s.e.path+describe(s.e.kind), msgs)
		for _, m := range msgs {
			if bareError[m] {
				h.failf(t, "%s%s: errorMessage %q does not say what went wrong", s.e.path, describe(s.e.kind), m)
			}
		}
	}
	return res
}

// bareError holds Go error texts that say nothing to a tenant reading a
// delivery record: a clear errorMessage names what the receiver did.
var bareError = map[string]bool{
	"EOF": true, "unexpected EOF": true, "context canceled": true, "context deadline exceeded": true,
}

// errorMessages returns the distinct errorMessages of a subscription's
// failed records.
func errorMessages(ctx context.Context, db *bun.DB, subID string) ([]string, error) {
	var msgs []string
	err := db.NewRaw(`SELECT DISTINCT coalesce(error_message, '') FROM webhook_deliveries
		WHERE subscription_id = ? AND NOT success ORDER BY 1`, subID).Scan(ctx, &msgs)
	return msgs, err
}

func describe(k behaviour) string {
	switch k {
	case answerHugeBody:
		return " (500 with a 50 MB body)"
	case answerStall:
		return " (stalls 60s before headers)"
	case answerRedirect:
		return " (302 to itself)"
	case answerReset:
		return " (connection reset)"
	case answerOK:
		return " (untrusted certificate)"
	}
	return ""
}

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
		h.rc.endpoint(answerHugeBody, 0),
		h.rc.endpoint(answerStall, 60*time.Second),
		h.rc.endpoint(answerRedirect, 0),
		h.rc.endpoint(answerReset, 0))
	subs = append(subs, h.subscribe(t, c, h.untrusted, expectFailure, h.untrusted.endpoint(answerOK, 0))...)

	before, err := h.st.worker.rssMiB()
	if err != nil {
		t.Fatal(err)
	}
	p := &publisher{c: c}
	p.burst(ctx, h.sc.hostileEvents, 2)
	if r := p.refusals(); len(r) > 0 {
		t.Errorf("%d events not accepted, e.g. %s", len(r), r[0])
	}
	res := h.settle(t, subs, p.ids())
	after, err := h.st.worker.rssMiB()
	if err != nil {
		t.Fatal(err)
	}
	h.notef(t, "worker RSS %.1f MiB before, %.1f MiB after (%+.1f MiB)", before, after, after-before)
	if after-before > rssGrowthLimitMiB {
		t.Errorf("worker RSS grew by %.1f MiB talking to hostile receivers, limit %d MiB", after-before, rssGrowthLimitMiB)
	}
	for _, s := range subs {
		msg, n := sampleError(ctx, h.st.db, s.id)
		h.notef(t, "%s: %d failed attempts, e.g. errorMessage %q", s.e.path+describe(s.e.kind), n, msg)
	}
	return res
}

// sampleError returns one errorMessage of a subscription's records and how
// many failed records it has.
func sampleError(ctx context.Context, db *bun.DB, subID string) (string, int) {
	var row struct {
		Msg string `bun:"msg"`
		N   int    `bun:"n"`
	}
	err := db.NewRaw(`SELECT coalesce(max(error_message), '') AS msg, count(*) AS n
		FROM webhook_deliveries WHERE subscription_id::text = ? AND NOT success`, subID).Scan(ctx, &row)
	if err != nil {
		return err.Error(), 0
	}
	return row.Msg, row.N
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

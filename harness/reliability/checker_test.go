package reliability

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// expectation is what must become of a subscription's deliveries.
type expectation int

const (
	expectDelivered expectation = iota // the receiver gets every event, answered 2xx
	expectFailure                      // every attempt fails: the final record ends it
)

// subscription is one subscription of a scenario and its receiving endpoint.
type subscription struct {
	id     string
	e      *endpoint
	expect expectation
}

// record is one row of webhook_deliveries.
type record struct {
	SubscriptionID string  `bun:"subscription_id"`
	EventID        string  `bun:"event_id"`
	AttemptNumber  int     `bun:"attempt_number"`
	Success        bool    `bun:"success"`
	StatusCode     *int    `bun:"status_code"`
	ErrorMessage   *string `bun:"error_message"`
}

// tally is the checker's verdict on one scenario.
type tally struct {
	accepted   int // events answered 202
	delivered  int // events every subscription got (or ended with its final record, where failure is expected)
	lost       int // events some subscription neither got nor has a final record for
	duplicates int // requests a receiver got beyond one per recorded attempt, or after its 2xx
	anomalies  int // (subscription, event) pairs whose records are wrong
	settled    int // pairs that will not change any more
	pairs      int

	anomalyNotes []string // the first few, for the report
	lostEvents   []string
	unsettled    []string // events with a pair still unsettled
}

func (t tally) String() string {
	return fmt.Sprintf("accepted=%d delivered=%d lost=%d duplicates=%d anomalies=%d",
		t.accepted, t.delivered, t.lost, t.duplicates, t.anomalies)
}

// check reads the delivery records of events and compares them with what
// the receivers got.
func check(ctx context.Context, db *bun.DB, subs []subscription, events []string) (tally, error) {
	t := tally{accepted: len(events), pairs: len(events) * len(subs)}
	ids := make([]string, len(subs))
	for i, s := range subs {
		ids[i] = s.id
	}
	var rows []record
	err := db.NewRaw(`SELECT subscription_id::text AS subscription_id, event_id::text AS event_id,
		attempt_number, success, status_code, error_message
		FROM webhook_deliveries WHERE subscription_id IN (?) ORDER BY attempt_number`, bun.List(ids)).Scan(ctx, &rows)
	if err != nil {
		return t, fmt.Errorf("read delivery records: %w", err)
	}
	type key struct{ sub, event string }
	byPair := map[key][]record{}
	for _, r := range rows {
		k := key{r.SubscriptionID, r.EventID}
		byPair[k] = append(byPair[k], r)
	}
	note := func(format string, args ...any) {
		t.anomalies++
		if len(t.anomalyNotes) < 8 {
			t.anomalyNotes = append(t.anomalyNotes, fmt.Sprintf(format, args...))
		}
	}
	for _, ev := range events {
		eventDelivered, eventLost, eventSettled := true, false, true
		for _, s := range subs {
			recs := byPair[key{s.id, ev}]
			got := s.e.got(ev)
			v := judge(s.expect, recs, got)
			if v.anomaly != "" {
				note("subscription %s (%s) event %s: %s", s.id, s.e.path, ev, v.anomaly)
			}
			t.duplicates += v.duplicates
			eventDelivered = eventDelivered && v.delivered
			eventLost = eventLost || v.lost
			if v.settled {
				t.settled++
			} else {
				eventSettled = false
			}
		}
		if !eventSettled {
			t.unsettled = append(t.unsettled, ev)
		}
		if eventDelivered {
			t.delivered++
		}
		if eventLost {
			t.lost++
			if len(t.lostEvents) < 3 {
				t.lostEvents = append(t.lostEvents, ev)
			}
		}
	}
	return t, nil
}

// verdict is the checker's judgement of one (subscription, event) pair.
type verdict struct {
	delivered, lost, settled bool
	duplicates               int
	anomaly                  string // empty when the records are right
}

func judge(want expectation, recs []record, got receipts) verdict {
	var v verdict
	n := len(recs)
	successAt := slices.IndexFunc(recs, func(r record) bool { return r.Success })
	final := successAt >= 0 || n >= attemptsPerSchedule ||
		(n > 0 && recs[n-1].StatusCode != nil && *recs[n-1].StatusCode == 410)

	var problems []string
	for i, r := range recs {
		if r.AttemptNumber != i+1 {
			problems = append(problems, fmt.Sprintf("attempt numbers %v are not 1..%d", attemptNumbers(recs), n))
			break
		}
	}
	if n > attemptsPerSchedule {
		problems = append(problems, fmt.Sprintf("%d attempts, the schedule allows %d", n, attemptsPerSchedule))
	}
	if successAt >= 0 && successAt != n-1 {
		problems = append(problems, fmt.Sprintf("attempts after the successful attempt %d", successAt+1))
	}
	if successAt >= 0 && got.completed2x == 0 {
		problems = append(problems, fmt.Sprintf("success record (attempt %d) but the receiver answered no 2xx", successAt+1))
	}
	for _, r := range recs {
		if !r.Success && (r.ErrorMessage == nil || *r.ErrorMessage == "") {
			problems = append(problems, fmt.Sprintf("failed attempt %d has no errorMessage", r.AttemptNumber))
		}
	}
	switch want {
	case expectDelivered:
		v.delivered = got.completed2x > 0
		v.lost = !v.delivered && !final
		v.settled = final
		if v.delivered && successAt < 0 && final {
			problems = append(problems, fmt.Sprintf("the receiver answered 2xx but the %d records end without a success", n))
		}
	case expectFailure:
		v.delivered = final
		v.lost = !final
		v.settled = final
		if successAt >= 0 {
			problems = append(problems, fmt.Sprintf("attempt %d recorded a success where every attempt must fail", successAt+1))
		}
	}
	// A request whose record is not (yet) written is not a duplicate;
	// one more than the records is.
	v.duplicates = max(got.n-max(n, 1), got.after2x, 0)
	if len(problems) > 0 {
		v.anomaly = fmt.Sprint(problems)
	}
	return v
}

func attemptNumbers(recs []record) []int {
	out := make([]int, len(recs))
	for i, r := range recs {
		out[i] = r.AttemptNumber
	}
	return out
}

// settle polls check until every pair has settled or the deadline passes,
// then returns the last tally. It also stops early once every unsettled
// event's delivery workflow has closed (done(event) reports that), since
// nothing will happen to those events any more.
func settle(ctx context.Context, db *bun.DB, subs []subscription, events []string, within time.Duration,
	done func(event string) bool) (tally, error) {
	deadline := time.Now().Add(within)
	closedSince := time.Time{}
	for {
		t, err := check(ctx, db, subs, events)
		if err == nil && t.settled == t.pairs {
			return t, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return t, err
		}
		// Closed workflows must stay so (and their records stay put) for
		// five seconds, so a record being written as the workflow ends counts.
		if err == nil && len(t.unsettled) <= 200 && allClosed(t.unsettled, done) {
			if closedSince.IsZero() {
				closedSince = time.Now()
			} else if time.Since(closedSince) > 5*time.Second {
				return t, nil
			}
		} else {
			closedSince = time.Time{}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func allClosed(events []string, done func(string) bool) bool {
	if done == nil {
		return false
	}
	for _, ev := range events {
		if !done(ev) {
			return false
		}
	}
	return true
}

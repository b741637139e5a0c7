package reliability

import (
	"strings"
	"testing"
)

// TestJudge checks the checker itself on hand-made records and receipts;
// unlike the fault suite it always runs.
func TestJudge(t *testing.T) {
	status := func(n int) *int { return &n }
	msg := func(s string) *string { return &s }
	ok := func(n int) record { return record{AttemptNumber: n, Success: true, StatusCode: status(200)} }
	failed := func(n int) record {
		return record{AttemptNumber: n, StatusCode: status(500), ErrorMessage: msg("HTTP 500 Internal Server Error")}
	}
	tests := []struct {
		name    string
		want    expectation
		recs    []record
		got     receipts
		verdict verdict
		anomaly string // a substring of the anomaly, "" for none
	}{
		{name: "delivered first time", want: expectDelivered,
			recs: []record{ok(1)}, got: receipts{n: 1, completed2x: 1},
			verdict: verdict{delivered: true, settled: true}},
		{name: "500 then 200", want: expectDelivered,
			recs: []record{failed(1), ok(2)}, got: receipts{n: 2, completed2x: 1},
			verdict: verdict{delivered: true, settled: true}},
		{name: "sent again after a kill: a duplicate, not an anomaly", want: expectDelivered,
			recs: []record{ok(1)}, got: receipts{n: 2, completed2x: 2, after2x: 1},
			verdict: verdict{delivered: true, settled: true, duplicates: 1}},
		{name: "nothing yet", want: expectDelivered,
			verdict: verdict{lost: true}},
		{name: "received, record not yet written", want: expectDelivered,
			got:     receipts{n: 1, completed2x: 1},
			verdict: verdict{delivered: true}},
		{name: "received but the records end in failure", want: expectDelivered,
			recs: []record{failed(1), failed(2), failed(3), failed(4)}, got: receipts{n: 4, completed2x: 1},
			verdict: verdict{delivered: true, settled: true}, anomaly: "end without a success"},
		{name: "gap in attempt numbers", want: expectDelivered,
			recs: []record{failed(1), ok(3)}, got: receipts{n: 2, completed2x: 1},
			verdict: verdict{delivered: true, settled: true}, anomaly: "not 1..2"},
		{name: "success without a receipt", want: expectDelivered,
			recs:    []record{ok(1)},
			verdict: verdict{settled: true}, anomaly: "answered no 2xx"},
		{name: "sent twice, nothing recorded yet", want: expectDelivered,
			got:     receipts{n: 2},
			verdict: verdict{lost: true, duplicates: 1}},
		{name: "attempt after success", want: expectDelivered,
			recs: []record{ok(1), failed(2)}, got: receipts{n: 2, completed2x: 1, after2x: 1},
			verdict: verdict{delivered: true, duplicates: 1, settled: true}, anomaly: "after the successful attempt"},
		{name: "failure without a message", want: expectFailure,
			recs: []record{failed(1), failed(2), failed(3), {AttemptNumber: 4, StatusCode: status(500)}}, got: receipts{n: 4},
			verdict: verdict{delivered: true, settled: true}, anomaly: "no errorMessage"},
		{name: "whole schedule failed", want: expectFailure,
			recs: []record{failed(1), failed(2), failed(3), failed(4)}, got: receipts{n: 4},
			verdict: verdict{delivered: true, settled: true}},
		{name: "schedule not finished", want: expectFailure,
			recs: []record{failed(1), failed(2)}, got: receipts{n: 2},
			verdict: verdict{lost: true}},
		{name: "too many attempts", want: expectFailure,
			recs: []record{failed(1), failed(2), failed(3), failed(4), failed(5)}, got: receipts{n: 5},
			verdict: verdict{delivered: true, settled: true}, anomaly: "the schedule allows 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge(tt.want, tt.recs, tt.got)
			gotAnomaly := v.anomaly
			v.anomaly = ""
			if v != tt.verdict {
				t.Errorf("verdict %+v, want %+v", v, tt.verdict)
			}
			switch {
			case tt.anomaly == "" && gotAnomaly != "":
				t.Errorf("unexpected anomaly %q", gotAnomaly)
			case tt.anomaly != "" && !strings.Contains(gotAnomaly, tt.anomaly):
				t.Errorf("anomaly %q, want one mentioning %q", gotAnomaly, tt.anomaly)
			}
		})
	}
}

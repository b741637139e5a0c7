package activities_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/activities"
)

func TestDurationRoundTrip(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		json string
	}{
		{2 * time.Second, `"2s"`},
		{90 * time.Second, `"1m30s"`},
		{1500 * time.Millisecond, `"1.5s"`},
		{720 * time.Hour, `"720h0m0s"`},
		{0, `"0s"`},
		{-time.Minute, `"-1m0s"`},
	} {
		b, err := json.Marshal(activities.Duration(c.d))
		if err != nil || string(b) != c.json {
			t.Errorf("%v marshals to %s, %v; want %s", c.d, b, err, c.json)
		}
		var back activities.Duration
		if err := json.Unmarshal(b, &back); err != nil || time.Duration(back) != c.d {
			t.Errorf("%s unmarshals to %v, %v; want %v", b, back, err, c.d)
		}
	}
}

// In a payload: a schedule is a list of strings, and a zero duration
// tagged omitempty is left out.
func TestDurationInAPayload(t *testing.T) {
	type payload struct {
		Schedule []activities.Duration `json:"schedule"`
		Wait     activities.Duration   `json:"wait,omitempty"`
	}
	b, err := json.Marshal(payload{Schedule: activities.Durations([]time.Duration{2 * time.Second, 5 * time.Minute})})
	if err != nil || string(b) != `{"schedule":["2s","5m0s"]}` {
		t.Fatalf("payload %s, %v", b, err)
	}
	var p payload
	if err := json.Unmarshal([]byte(`{"schedule":["2s","5m"],"wait":"1m30s"}`), &p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Schedule, []activities.Duration{activities.Duration(2 * time.Second), activities.Duration(5 * time.Minute)}) ||
		time.Duration(p.Wait) != 90*time.Second {
		t.Fatalf("decoded %+v", p)
	}
	if activities.Durations(nil) != nil {
		t.Error("no schedule became an empty one")
	}
}

// Only duration strings are accepted; null leaves the value as it was.
func TestDurationRefusesNumbersAndGarbage(t *testing.T) {
	for _, in := range []string{`2000000000`, `2`, `2.5`, `"2"`, `"two seconds"`, `""`, `true`, `["2s"]`, `{"d":"2s"}`} {
		d := activities.Duration(time.Second)
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("%s accepted as %v", in, d)
		}
	}
	d := activities.Duration(time.Second)
	if err := json.Unmarshal([]byte(`null`), &d); err != nil || time.Duration(d) != time.Second {
		t.Errorf("null: %v, %v; want it left at 1s", d, err)
	}
}

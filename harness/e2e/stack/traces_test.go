package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// jaegerTrace is a trace as Jaeger's query API (/api/traces) returns it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string      `json:"spanID"`
		OperationName string      `json:"operationName"`
		ProcessID     string      `json:"processID"`
		Tags          []jaegerTag `json:"tags"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// checkTrace finds an event's trace as docs/operations.md tells an
// operator to: a search of Jaeger's query API by the tag event.id on the
// api's service, then the trace by its id; the trace must hold the api's
// publish span and, from the workers, the attempt activity's span and one
// POST per subscription (subs), each tagged with the event's id.
func checkTrace(ctx context.Context, t *testing.T, m procstack.Manifest, eventID string, subs int) {
	t.Helper()
	if m.Jaeger.Addr == "" {
		t.Fatal("the stack started no Jaeger")
	}
	base := "http://" + m.Jaeger.Addr
	search := base + "/api/traces?" + url.Values{
		"service": {"workspace-api"}, "tag": {"event.id:" + eventID},
	}.Encode()
	var missing []string
	// Spans leave each process in batches (OTEL_BSP_SCHEDULE_DELAY, 5 s).
	deadline := time.Now().Add(45 * time.Second)
	for {
		missing = missing[:0]
		var found struct{ Data []jaegerTrace }
		err := getJSON(ctx, search, &found)
		switch {
		case err != nil:
			missing = append(missing, err.Error())
		case len(found.Data) != 1:
			missing = append(missing, fmt.Sprintf("the search found %d traces", len(found.Data)))
		default:
			var byID struct{ Data []jaegerTrace }
			if err := getJSON(ctx, base+"/api/traces/"+found.Data[0].TraceID, &byID); err != nil || len(byID.Data) != 1 {
				missing = append(missing, fmt.Sprintf("GET /api/traces/%s: %d traces (%v)", found.Data[0].TraceID, len(byID.Data), err))
				break
			}
			missing = traceMissing(byID.Data[0], eventID, subs)
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s's trace in Jaeger (%s): %v", eventID, search, missing)
		}
		time.Sleep(time.Second)
	}
}

// traceMissing lists what tr lacks of an event's path.
func traceMissing(tr jaegerTrace, eventID string, subs int) []string {
	var missing []string
	var publish, activity, posts int
	for _, s := range tr.Spans {
		service := tr.Processes[s.ProcessID].ServiceName
		tagged := slices.ContainsFunc(s.Tags, func(kv jaegerTag) bool { return kv.Key == "event.id" && kv.Value == eventID })
		switch {
		case service == "workspace-api" && s.OperationName == "POST /v1/workspaces/{workspaceId}/events" && tagged:
			publish++
		case service == "workspace-worker" && s.OperationName == "RunActivity:AttemptDelivery":
			activity++
		case service == "workspace-worker" && s.OperationName == "webhook POST" && tagged:
			posts++
		}
	}
	if publish != 1 {
		missing = append(missing, fmt.Sprintf("%d publish spans from workspace-api tagged event.id, want 1", publish))
	}
	if activity < subs || posts < subs {
		missing = append(missing, fmt.Sprintf("%d attempt activity spans and %d webhook POST spans from workspace-worker, want at least %d of each",
			activity, posts, subs))
	}
	return missing
}

func getJSON(ctx context.Context, url string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

package reliability

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"
)

// workflowID is the delivery workflow of an event (workflows.DeliveryWorkflowID).
func workflowID(eventID string) string { return "webhook-event:" + eventID }

// historySize reads a delivery workflow's history through the SDK client
// and returns its event count and its size in bytes (protobuf encoding).
func (h *harness) historySize(ctx context.Context, eventID string) (events, bytes int, err error) {
	it := h.st.TC.GetWorkflowHistory(ctx, workflowID(eventID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return events, bytes, err
		}
		events++
		bytes += proto.Size(ev)
	}
	return events, bytes, nil
}

// workflowClosed reports whether an event's delivery workflow exists and
// has closed, whatever its outcome. A missing workflow is not closed: the
// outbox sweeper may still start it.
func (h *harness) workflowClosed(eventID string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := h.st.TC.DescribeWorkflowExecution(ctx, workflowID(eventID), "")
	if err != nil {
		return false
	}
	return d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// explain says why an event was not delivered: its workflow's state, its
// pending activities, how it closed, and the worker's log lines about it.
func (h *harness) explain(eventID string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	d, err := h.st.TC.DescribeWorkflowExecution(ctx, workflowID(eventID), "")
	if err != nil {
		fmt.Fprintf(&b, "workflow: %v", err)
	} else {
		fmt.Fprintf(&b, "workflow %s", d.GetWorkflowExecutionInfo().GetStatus())
		for _, pa := range d.GetPendingActivities() {
			fmt.Fprintf(&b, "; pending %s attempt %d (%s) last failure %q", pa.GetActivityType().GetName(),
				pa.GetAttempt(), pa.GetState(), pa.GetLastFailure().GetMessage())
		}
		if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			it := h.st.TC.GetWorkflowHistory(ctx, workflowID(eventID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
			if it.HasNext() {
				if ev, err := it.Next(); err == nil {
					if f := ev.GetWorkflowExecutionFailedEventAttributes().GetFailure(); f != nil {
						fmt.Fprintf(&b, "; failed: %s", f.GetMessage())
						if c := f.GetCause(); c != nil {
							fmt.Fprintf(&b, " (cause: %s)", c.GetMessage())
						}
					}
				}
			}
		}
	}
	for _, line := range grepLog(h.st.Worker.LogPath, eventID, 3) {
		b.WriteString("\n    worker log: " + line)
	}
	return b.String()
}

// grepLog returns up to n lines of a log that mention s: errors first,
// then warnings.
func grepLog(path, s string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var errs, warns []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && len(errs) < n {
		line := sc.Text()
		switch {
		case !strings.Contains(line, s):
		case strings.Contains(line, `"level":"ERROR"`):
			errs = append(errs, truncate(line, 600))
		case strings.Contains(line, `"level":"WARN"`) && len(warns) < n:
			warns = append(warns, truncate(line, 600))
		}
	}
	return append(errs, warns...)[:min(n, len(errs)+len(warns))]
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package store

import (
	"context"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
)

// Every publish runs createEventSQL: its plan reads the workspace's
// subscriptions once, not once per column that uses them (the recipients
// and dispatched_at), which the planner did by copying the sub-select.
func TestCreateEventReadsRecipientsOnce(t *testing.T) {
	db, err := Open(pgtest.NewURL(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PREPARE create_event (uuid, uuid, text, jsonb, timestamptz, jsonb) AS "+createEventSQL); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, `EXPLAIN (COSTS OFF) EXECUTE create_event(gen_random_uuid(), gen_random_uuid(), 'test.created', '{}', now(), NULL)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(plan.String(), " on webhook_subscriptions "); n != 1 {
		t.Fatalf("the plan reads webhook_subscriptions %d times, want once:\n%s", n, plan.String())
	}
}

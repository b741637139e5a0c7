package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// The plans PostgreSQL runs inside the hot functions, read with
// auto_explain (its plans come back as notices): the event insert reads
// the workspace's subscriptions once, not once per column that uses them
// (the planner copied the sub-select into both), and each statement runs a
// generic plan, its arguments parameters ($n), not constants folded in.
func TestHotFunctionsRunGenericPlans(t *testing.T) {
	url := pgtest.NewURL(t)
	db, err := store.Open(url, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	creds, err := store.New(db).Bootstrap(context.Background(), "P", "p-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ws := creds.WorkspaceID
	calls := map[string]string{
		"event_create_v1": `SELECT * FROM event_create_v1(p_id => gen_random_uuid(), p_workspace_id => '` + ws.String() + `',
			p_type => 'test.created', p_data => '{}', p_now => now())`,
		"webhook_attempt_state_v1": `SELECT * FROM webhook_attempt_state_v1(p_subscription_id => '` + ws.String() + `',
			p_event_id => gen_random_uuid(), p_attempt => 1)`,
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			plans := nestedPlans(t, url, call)
			var inner []string
			for _, p := range plans {
				if !strings.Contains(p, "Query Text: SELECT * FROM "+name) {
					inner = append(inner, p)
				}
			}
			if len(inner) == 0 {
				t.Fatalf("no plan from inside %s; notices: %q", name, plans)
			}
			for _, p := range inner {
				if strings.Contains(p, ws.String()) || !strings.Contains(p, "$") {
					t.Errorf("a custom plan (the argument folded in, no parameter):\n%s", p)
				}
			}
			if name != "event_create_v1" {
				return
			}
			i := slices.IndexFunc(inner, func(p string) bool { return strings.Contains(p, "Insert on events") })
			if i < 0 {
				t.Fatalf("no plan of the insert: %q", inner)
			}
			if n := strings.Count(inner[i], " on webhook_subscriptions "); n != 1 {
				t.Errorf("the insert reads webhook_subscriptions %d times, want once:\n%s", n, inner[i])
			}
		})
	}
}

// nestedPlans runs call on a new session with auto_explain logging every
// statement's plan, nested ones included, to the client.
func nestedPlans(t *testing.T, url, call string) []string {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
		"SET auto_explain.log_nested_statements = on", "SET auto_explain.log_level = notice",
		"SET client_min_messages = notice", call} {
		if _, err := conn.Exec(ctx, q).ReadAll(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return notices
}

package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// The plans PostgreSQL runs inside the hot functions, read with
// auto_explain (its plans come back as notices): the event insert reads
// the workspace's subscriptions once, not once per column that uses them
// (the planner copied the sub-select into both), and each statement runs a
// generic plan, its arguments parameters ($n), never the call's constants
// (ids) folded in, as a custom plan would.
func TestHotFunctionsRunGenericPlans(t *testing.T) {
	url := pgtest.NewURL(t)
	db, err := store.Open(url, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	st := store.New(db)
	creds, err := st.Bootstrap(ctx, "P", "p-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ws := creds.WorkspaceID
	sub, err := st.Webhooks().Create(ctx, uuid.New(), models.NewWebhook{WorkspaceID: ws, CreatorID: creds.UserID,
		URL: "https://example.com", EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true}, []byte{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	s, e := "'"+sub.ID.String()+"'", "'"+ev.ID.String()+"'"
	// Each call's arguments are constants here, so a custom plan would
	// show them (the workspace's, the subscription's or the event's id).
	calls := map[string]string{
		"event_create_v1": `SELECT * FROM event_create_v1(p_id => gen_random_uuid(), p_workspace_id => '` + ws.String() + `',
			p_type => 'test.created', p_data => '{}', p_now => now())`,
		// With a lease key the attempt would send: webhook_send_acquire runs.
		"webhook_attempt_state_v1": `SELECT * FROM webhook_attempt_state_v1(p_subscription_id => ` + s + `,
			p_event_id => ` + e + `, p_attempt => 1, p_lease_key => gen_random_uuid(), p_lease_max => 10,
			p_lease_duration => interval '1 minute')`,
		// A failure that starts a failing spell: every step runs. Attempt
		// 2, so that attempt 1's state still finds no record whichever
		// runs first (the map's order is random).
		"webhook_record_attempt_v1": `SELECT * FROM webhook_record_attempt_v1(p_id => gen_random_uuid(),
			p_subscription_id => ` + s + `, p_event_id => ` + e + `, p_attempt => 2, p_success => false,
			p_status_code => 500, p_response_body => '', p_response_time_ms => 1, p_error_message => NULL,
			p_recorded_at => now(), p_now => now(), p_status => 'failed', p_next_attempt_at => NULL,
			p_exhausts => true, p_may_recover => true, p_disable_after => interval '0', p_disable_min_span => interval '0',
			p_lease => gen_random_uuid(), p_pause => interval '1 second')`,
	}
	ids := []string{ws.String(), sub.ID.String(), ev.ID.String()}
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
				for _, id := range ids {
					if strings.Contains(p, id) {
						t.Errorf("a custom plan (an argument folded in):\n%s", p)
					}
				}
			}
			if !slices.ContainsFunc(inner, func(p string) bool { return strings.Contains(p, "$") }) {
				t.Errorf("no plan inside %s shows a parameter: %q", name, inner)
			}
			if name == "webhook_attempt_state_v1" && !slices.ContainsFunc(inner, func(p string) bool {
				return strings.Contains(p, "webhook_send_limits")
			}) {
				t.Errorf("webhook_send_acquire did not run: %q", inner)
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

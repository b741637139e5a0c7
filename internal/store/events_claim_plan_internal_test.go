package store

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/models"
)

// The claim's order is its walk's: which rows the LIMIT takes depends on
// the plan reading workspaces and their events by index, in the
// rotation's order, lazily. A plan that sorts anything (every waiting
// workspace, as the claim once did, or a turn's events) reads the whole
// backlog and may cut the turns elsewhere, so none may appear; and no
// sequential scan of events, which would read it all too.
func TestEventsClaimPlanWalksIndexesWithoutSorting(t *testing.T) {
	db, err := Open(pgtest.NewURL(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var ws []uuid.UUID
	if err := db.NewRaw(`INSERT INTO workspaces (id, name) SELECT gen_random_uuid(), 'w' || g
		FROM generate_series(1, 200) g RETURNING id`).Scan(ctx, &ws); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), w.id, 'test.created', '{}'::jsonb, now() - g * interval '1 s', ARRAY[gen_random_uuid()]
		FROM workspaces w, generate_series(1, 20) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE events`); err != nil {
		t.Fatal(err)
	}
	assertPlanWalks(t, db, "the claim", claimSQL, models.EventWebhookTest, ws[100], 16, 60.0)
	// The quiet lane's claim walks the same way, with a count per workspace.
	assertPlanWalks(t, db, "the quiet lane's claim", claimQuietSQL, models.EventWebhookTest, ws[100], 8, 60.0, 8, QuietWalk)
}

// assertPlanWalks fails if the plan of query sorts or scans events whole.
func assertPlanWalks(t *testing.T, db *bun.DB, name, query string, args ...any) {
	t.Helper()
	var plan []byte
	if err := db.NewRaw("EXPLAIN (FORMAT JSON) "+query, args...).Scan(context.Background(), &plan); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if typ, ok := v["Node Type"].(string); ok {
				rel, _ := v["Relation Name"].(string)
				nodes = append(nodes, typ+" "+rel)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	var doc any
	if err := json.Unmarshal(plan, &doc); err != nil {
		t.Fatal(err)
	}
	walk(doc)
	for _, n := range nodes {
		if strings.Contains(n, "Sort") || n == "Seq Scan events" {
			t.Fatalf("%s's plan has a %q node, reading the whole backlog: %v", name, n, nodes)
		}
	}
	if len(nodes) == 0 {
		t.Fatalf("no plan read: %s", plan)
	}
}

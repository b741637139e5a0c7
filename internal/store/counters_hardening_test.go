package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/harness/seed"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// These tests cover migration 20261123000090: the counter triggers lock
// their rows in key order (no deadlock between concurrent multi-tenant
// deletes), TRUNCATE resets the counters, and the name filter's trigram
// index is per workspace.

// storm runs step from workers goroutines, rounds times each, and returns
// how many statements PostgreSQL ended with deadlock_detected (40P01). It
// stops early once a few deadlocks happened: one is enough to fail, and
// each costs deadlock_timeout. Any other error fails the test.
func storm(t *testing.T, workers, rounds int, step func(ctx context.Context, rng *rand.Rand, w, r int) error) int64 {
	t.Helper()
	ctx := context.Background()
	var deadlocks atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for r := range rounds {
				if deadlocks.Load() >= 3 {
					return
				}
				err := step(ctx, rng, w, r)
				var pgErr pgdriver.Error
				switch {
				case err == nil:
				case errors.As(err, &pgErr) && pgErr.Field('C') == "40P01":
					deadlocks.Add(1)
					t.Logf("worker %d round %d: %v", w, r, err)
				default:
					t.Errorf("worker %d round %d: %v", w, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return deadlocks.Load()
}

// randomSubset returns a random subset of ids (at least two, in random
// order).
func randomSubset(rng *rand.Rand, ids []uuid.UUID) []uuid.UUID {
	s := append([]uuid.UUID(nil), ids...)
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s[:2+rng.IntN(len(s)-1)]
}

func uuidArray(ids []uuid.UUID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.String()
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// Concurrent statements that each remove records of many subscriptions (a
// purge batch, an operator's DELETE, an event's deletion by cascade) update
// the subscriptions' counters in one order, so they queue instead of
// deadlocking; the totals stay exact. Each worker owns its own events, so
// two statements never touch the same record, only the same counters.
func TestDeliveryCounterRemovalsDoNotDeadlock(t *testing.T) {
	f := newDeliveryFixture(t, false)
	ctx := context.Background()
	f.db.SetMaxOpenConns(32)
	const subs, workers, eventsPerWorker, rounds = 40, 12, 3, 100
	ids := []uuid.UUID{f.sub.ID}
	for len(ids) < subs {
		ids = append(ids, f.subscription(t).ID)
	}
	// Worker w's events and their records (one attempt per subscription).
	events := make([][]uuid.UUID, workers)
	insertRecords := func(ctx context.Context, evs, subs []uuid.UUID) error {
		_, err := f.db.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number, success)
			SELECT gen_random_uuid(), s, e, 1, true FROM unnest(?::uuid[]) AS e, unnest(?::uuid[]) AS s
			ON CONFLICT DO NOTHING`, uuidArray(evs), uuidArray(subs))
		return err
	}
	newEvents := func(ctx context.Context, w int) error {
		evs := make([]uuid.UUID, eventsPerWorker)
		for i := range evs {
			evs[i] = uuid.New()
		}
		if _, err := f.db.ExecContext(ctx, `INSERT INTO events (id, workspace_id, type, data)
			SELECT e, ?, 'test.created', '{}' FROM unnest(?::uuid[]) AS e`, f.ws.WorkspaceID, uuidArray(evs)); err != nil {
			return err
		}
		events[w] = evs
		return insertRecords(ctx, evs, ids)
	}
	for w := range workers {
		if err := newEvents(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	deadlocks := storm(t, workers, rounds, func(ctx context.Context, rng *rand.Rand, w, r int) error {
		switch r % 4 {
		case 3: // the worker's events go, their records by cascade
			if _, err := f.db.ExecContext(ctx, `DELETE FROM events WHERE id = ANY(?::uuid[])`, uuidArray(events[w])); err != nil {
				return err
			}
			return newEvents(ctx, w)
		default: // one statement removes records of some subscriptions
			some := randomSubset(rng, ids)
			if _, err := f.db.ExecContext(ctx, `DELETE FROM webhook_deliveries
				WHERE event_id = ANY(?::uuid[]) AND subscription_id = ANY(?::uuid[])`,
				uuidArray(events[w]), uuidArray(some)); err != nil {
				return err
			}
			return insertRecords(ctx, events[w], some)
		}
	})
	if deadlocks > 0 {
		t.Errorf("%d statements deadlocked", deadlocks)
	}
	for _, id := range ids {
		f.checkTotal(t, id)
	}
}

// The same for projects: concurrent statements each removing projects of
// many workspaces (an operator's DELETE, workspaces deleted together) lock
// the workspaces' counters in one order. Each worker owns its own projects
// (named w<worker>-…) in every workspace and every task type.
func TestProjectCounterRemovalsDoNotDeadlock(t *testing.T) {
	st := store.New(pgtest.NewDB(t))
	db := st.DB()
	db.SetMaxOpenConns(32)
	ctx := context.Background()
	const spaces, workers, rounds = 30, 12, 100
	var ids []uuid.UUID
	for i := range spaces {
		ids = append(ids, bootstrap(t, st, fmt.Sprintf("W%d", i)).WorkspaceID)
	}
	insert := func(ctx context.Context, w int, some []uuid.UUID) error {
		_, err := db.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, task_type, source)
			SELECT gen_random_uuid(), ws, 'w' || ? || '-' || tt || '-' || i, tt, 'api'
			FROM unnest(?::uuid[]) AS ws, unnest(?::text[]) AS tt, generate_series(1, 2) AS i
			ON CONFLICT DO NOTHING`, w, uuidArray(some), taskTypeArray())
		return err
	}
	for w := range workers {
		if err := insert(ctx, w, ids); err != nil {
			t.Fatal(err)
		}
	}
	deadlocks := storm(t, workers, rounds, func(ctx context.Context, rng *rand.Rand, w, r int) error {
		some := randomSubset(rng, ids)
		q := `DELETE FROM projects WHERE workspace_id = ANY(?::uuid[]) AND name LIKE ?`
		if r%2 == 1 { // one task type only: other rows of the same workspaces
			q += fmt.Sprintf(` AND task_type = '%s'`, models.TaskTypes[rng.IntN(len(models.TaskTypes))])
		}
		if _, err := db.ExecContext(ctx, q, uuidArray(some), fmt.Sprintf("w%d-%%", w)); err != nil {
			return err
		}
		return insert(ctx, w, some)
	})
	if deadlocks > 0 {
		t.Errorf("%d statements deadlocked", deadlocks)
	}
	for _, id := range ids[:3] {
		checkProjectTotals(t, st, db, id, "w1-")
	}
	checkProjectCounters(t, db)
}

func taskTypeArray() string {
	parts := make([]string, len(models.TaskTypes))
	for i, tt := range models.TaskTypes {
		parts[i] = string(tt)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// checkProjectCounters compares every counter with a count of the rows:
// no (workspace, task type) is missing, extra (beyond zeros) or off.
func checkProjectCounters(t *testing.T, db *bun.DB) {
	t.Helper()
	var wrong []string
	if err := db.NewRaw(`SELECT coalesce(c.workspace_id, p.workspace_id)::text || '/' || coalesce(c.task_type, p.task_type)
			|| ': counter ' || coalesce(c.n::text, 'missing') || ', rows ' || coalesce(p.n, 0)
		FROM project_counts AS c
		FULL JOIN (SELECT workspace_id, task_type, count(*) AS n FROM projects GROUP BY 1, 2) AS p
			USING (workspace_id, task_type)
		WHERE coalesce(c.n, -1) <> coalesce(p.n, 0)`).Scan(context.Background(), &wrong); err != nil {
		t.Fatal(err)
	}
	for _, w := range wrong {
		t.Error(w)
	}
}

// checkDeliveryCounters does the same for the record counters (summed over
// the slots of each subscription).
func checkDeliveryCounters(t *testing.T, db *bun.DB) {
	t.Helper()
	var wrong []string
	if err := db.NewRaw(`SELECT coalesce(c.subscription_id, d.subscription_id)::text
			|| ': counter ' || coalesce(c.n::text, 'missing') || ', rows ' || coalesce(d.n, 0)
		FROM (SELECT subscription_id, sum(n) AS n FROM webhook_delivery_counts GROUP BY 1) AS c
		FULL JOIN (SELECT subscription_id, count(*) AS n FROM webhook_deliveries GROUP BY 1) AS d
			USING (subscription_id)
		WHERE coalesce(c.n, -1) <> coalesce(d.n, 0)`).Scan(context.Background(), &wrong); err != nil {
		t.Fatal(err)
	}
	for _, w := range wrong {
		t.Error(w)
	}
}

// TRUNCATE fires no DELETE trigger; its own triggers reset the counters,
// whether the table is truncated itself or by a parent's TRUNCATE …
// CASCADE, and the totals stay exact through later writes.
func TestTruncateResetsCounters(t *testing.T) {
	f := newDeliveryFixture(t, false)
	ctx := context.Background()
	other := bootstrap(t, f.st, "Other")
	seed := func() {
		t.Helper()
		for _, ws := range []uuid.UUID{f.ws.WorkspaceID, other.WorkspaceID} {
			if err := seed.Projects(ctx, f.db, ws, 30); err != nil {
				t.Fatal(err)
			}
		}
		if err := seed.Deliveries(ctx, f.db, f.sub.ID, 50); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(q string) {
		t.Helper()
		if _, err := f.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	check := func(wantProjects, wantRecords int) {
		t.Helper()
		checkProjectCounters(t, f.db)
		checkDeliveryCounters(t, f.db)
		checkProjectTotals(t, f.st, f.db, f.ws.WorkspaceID, "seed")
		if got := countProjects(t, f.db, models.ProjectFilter{WorkspaceID: f.ws.WorkspaceID}); got != wantProjects {
			t.Errorf("%d projects, want %d", got, wantProjects)
		}
		if got := f.list(t, f.sub.ID, 1, 25).Meta.TotalItems; got != wantRecords {
			t.Errorf("records total %d, want %d", got, wantRecords)
		}
		f.checkTotal(t, f.sub.ID)
	}

	seed()
	check(30, 50)
	exec(`TRUNCATE projects`)
	check(0, 50)
	exec(`TRUNCATE webhook_deliveries`)
	check(0, 0)
	seed()
	check(30, 50)
	// A rolled back TRUNCATE leaves the counters as they were.
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `TRUNCATE projects, webhook_deliveries`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	check(30, 50)
	// The records go with their events' TRUNCATE … CASCADE.
	exec(`TRUNCATE events CASCADE`)
	check(30, 0)
	seed()
	check(60, 50)
	// Everything goes with the workspaces' (counters included, directly
	// and by the triggers); new tenants start from zero.
	exec(`TRUNCATE workspaces CASCADE`)
	for _, q := range []string{`SELECT count(*) FROM project_counts`, `SELECT count(*) FROM webhook_delivery_counts`} {
		var n int
		if err := f.db.NewRaw(q).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d", q, n)
		}
	}
	f.ws = bootstrap(t, f.st, "Again")
	f.sub = f.subscription(t)
	other = bootstrap(t, f.st, "Other again")
	seed()
	check(30, 50)
}

// A name filter in a small workspace reads only that workspace's projects,
// however many of another tenant's names match: the trigram index is on
// (workspace_id, name), so no scan of the plan (the page's, the count's)
// yields more rows than the workspace holds. With the name-only trigram
// index of 20261123000050, the plan bitmap-scanned the other tenant's
// matches.
func TestNameFilterReadsOnlyItsWorkspace(t *testing.T) {
	st := store.New(pgtest.NewDB(t))
	db := st.DB()
	ctx := context.Background()
	big, small := bootstrap(t, st, "Big"), bootstrap(t, st, "Small")
	const smallSize = 500
	if err := seed.Projects(ctx, db, big.WorkspaceID, 20_000); err != nil {
		t.Fatal(err)
	}
	if err := seed.Projects(ctx, db, small.WorkspaceID, smallSize); err != nil {
		t.Fatal(err)
	}
	var bigBatch string // "seed-<8 hex>-" of the big workspace's names
	if err := db.NewRaw(`SELECT left(name, 14) FROM projects WHERE workspace_id = ? LIMIT 1`, big.WorkspaceID).Scan(ctx, &bigBatch); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bigBatch + "0001", bigBatch + "00012", bigBatch[5:13], "seed", "0000123"} {
		for _, q := range []string{
			`SELECT p.* FROM projects AS p WHERE p.workspace_id = ? AND p.name ILIKE ? ESCAPE '\'
				ORDER BY p.date_created DESC, p.id DESC LIMIT 25`,
			`SELECT count(*) FROM projects AS p WHERE p.workspace_id = ? AND p.name ILIKE ? ESCAPE '\'`,
		} {
			var plan string
			if err := db.NewRaw(`EXPLAIN (ANALYZE, FORMAT JSON) `+q, small.WorkspaceID, "%"+name+"%").Scan(ctx, &plan); err != nil {
				t.Fatal(err)
			}
			var nodes []map[string]any
			if err := json.Unmarshal([]byte(plan), &nodes); err != nil {
				t.Fatal(err)
			}
			walkPlan(nodes[0]["Plan"].(map[string]any), func(n map[string]any) {
				if !strings.HasSuffix(n["Node Type"].(string), "Scan") {
					return
				}
				read := 0.0
				for _, k := range []string{"Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck"} {
					v, _ := n[k].(float64)
					read += v
				}
				if loops, _ := n["Actual Loops"].(float64); read*max(loops, 1) > smallSize {
					t.Errorf("name %q: %s on %v yields %.0f rows, more than the workspace's %d:\n%s",
						name, n["Node Type"], n["Index Name"], read, smallSize, plan)
				}
			})
		}
	}
	checkProjectTotals(t, st, db, small.WorkspaceID, bigBatch+"0001", "seed", "-00001")
}

func walkPlan(n map[string]any, fn func(map[string]any)) {
	fn(n)
	children, _ := n["Plans"].([]any)
	for _, c := range children {
		walkPlan(c.(map[string]any), fn)
	}
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/harness/seed"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// heapTuplesRead runs fn and returns how many rows of table it read from the
// heap (sequential scans plus index and bitmap fetches), from the
// statistics views. db must hold a single connection, so that fn's queries
// and the forced statistics flushes run on one backend.
func heapTuplesRead(t *testing.T, db *bun.DB, table string, fn func()) int64 {
	t.Helper()
	ctx := context.Background()
	read := func() int64 {
		// The flush happens when this statement's backend goes idle,
		// before the next one reads the view.
		if _, err := db.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := db.NewRaw(`SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
			FROM pg_stat_user_tables WHERE relname = ?`, table).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := read()
	fn()
	return read() - before
}

// singleConnStore is a store on a fresh database whose pool holds one
// connection (see heapTuplesRead).
func singleConnStore(t *testing.T) (*store.Store, *bun.DB) {
	t.Helper()
	db := pgtest.NewDB(t)
	db.SetMaxOpenConns(1)
	return store.New(db), db
}

func bootstrap(t *testing.T, st *store.Store, name string) store.Credentials {
	t.Helper()
	c, err := st.Bootstrap(context.Background(), name, name+"-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// countProjects is the truth the totals are checked against.
func countProjects(t *testing.T, db *bun.DB, f models.ProjectFilter) int {
	t.Helper()
	q := db.NewSelect().TableExpr("projects").Where("workspace_id = ?", f.WorkspaceID)
	if f.Name != "" {
		q = q.Where("strpos(lower(name), lower(?)) > 0", f.Name)
	}
	if f.TaskType != "" {
		q = q.Where("task_type = ?", string(f.TaskType))
	}
	n, err := q.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkProjectTotals lists the first page, a middle one, the last and one
// past the end under each filter, and compares totalItems with a count.
func checkProjectTotals(t *testing.T, st *store.Store, db *bun.DB, ws uuid.UUID, names ...string) {
	t.Helper()
	ctx := context.Background()
	var filters []models.ProjectFilter
	for _, tt := range append([]models.TaskType{""}, models.TaskTypes...) {
		for _, name := range append([]string{""}, names...) {
			filters = append(filters, models.ProjectFilter{WorkspaceID: ws, TaskType: tt, Name: name})
		}
	}
	for _, f := range filters {
		want := countProjects(t, db, f)
		for _, page := range []models.PageRequest{{Page: 1, PerPage: 25}, {Page: 2, PerPage: 7}, {Page: (want + 9) / 10, PerPage: 10}, {Page: want/10 + 2, PerPage: 10}} {
			if page.Page < 1 {
				page.Page = 1
			}
			f.Page = page
			got, err := st.Projects("https://app.test").List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			wantItems := min(page.PerPage, max(0, want-page.Offset()))
			if got.Meta.TotalItems != want || len(got.Items) != wantItems {
				t.Errorf("name %q taskType %q page %+v: total %d with %d items, want %d with %d",
					f.Name, f.TaskType, page, got.Meta.TotalItems, len(got.Items), want, wantItems)
			}
		}
	}
}

// Totals stay exact through every way projects come and go: the API's
// creates and deletes, bulk SQL inserts, and another workspace's deletion,
// under each filter, on full, partial, last and past-the-end pages.
func TestProjectTotalsExact(t *testing.T) {
	st := store.New(pgtest.NewDB(t))
	db := st.DB()
	ctx := context.Background()
	ws := bootstrap(t, st, "Acme")
	other := bootstrap(t, st, "Other")
	p := st.Projects("https://app.test")

	checkProjectTotals(t, st, db, ws.WorkspaceID, "alpha")
	var made []models.Project
	for i := range 30 {
		pr, err := p.Create(ctx, models.NewProject{WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID,
			Name: fmt.Sprintf("Alpha %d", i), TaskType: models.TaskTypes[i%3]})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, pr)
	}
	if err := seed.Projects(ctx, db, ws.WorkspaceID, 200); err != nil {
		t.Fatal(err)
	}
	if err := seed.Projects(ctx, db, other.WorkspaceID, 50); err != nil {
		t.Fatal(err)
	}
	checkProjectTotals(t, st, db, ws.WorkspaceID, "alpha", "ALPHA 1", "-00001", "seed", "zz", "%", "_")
	for _, pr := range made[:10] {
		if err := p.Delete(ctx, ws.WorkspaceID, pr.ID); err != nil {
			t.Fatal(err)
		}
	}
	// A bulk delete of one statement, and a project moved to another type.
	if _, err := db.ExecContext(ctx, `DELETE FROM projects WHERE workspace_id = ? AND name LIKE 'seed-%-00000%'`, ws.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE projects SET task_type = 'text-classification' WHERE id = ?`, made[20].ID); err != nil {
		t.Fatal(err)
	}
	checkProjectTotals(t, st, db, ws.WorkspaceID, "alpha", "-0001", "seed")

	// Deleting a workspace (its projects by cascade) leaves the other
	// workspace's totals alone and no counter behind.
	if _, err := db.ExecContext(ctx, `DELETE FROM workspaces WHERE id = ?`, other.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.NewRaw(`SELECT count(*) FROM project_counts WHERE workspace_id = ?`, other.WorkspaceID).Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d counters of a deleted workspace left", left)
	}
	checkProjectTotals(t, st, db, ws.WorkspaceID, "alpha")
}

// Concurrent creates never pass the cap, which reads the counter, and the
// total afterwards is exact.
func TestProjectCapUnderConcurrentCreates(t *testing.T) {
	st := store.New(pgtest.NewDB(t))
	ctx := context.Background()
	ws := bootstrap(t, st, "Acme")
	if err := seed.Projects(ctx, st.DB(), ws.WorkspaceID, 40); err != nil {
		t.Fatal(err)
	}
	const limit = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	made, refused := 0, 0
	for i := range 40 {
		wg.Go(func() {
			_, err := st.Projects("").Create(ctx, models.NewProject{WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID,
				Name: fmt.Sprintf("p%d", i), TaskType: models.TaskLLMBase, Cap: limit})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made++
			case errors.Is(err, models.ErrConflict):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if made != limit-40 || refused != 40-(limit-40) {
		t.Errorf("made %d, refused %d; want %d and %d", made, refused, limit-40, 40-(limit-40))
	}
	page, err := st.Projects("").List(ctx, models.ProjectFilter{WorkspaceID: ws.WorkspaceID, Page: models.PageRequest{Page: 1, PerPage: 25}})
	if err != nil || page.Meta.TotalItems != limit {
		t.Errorf("total %d (%v), want %d", page.Meta.TotalItems, err, limit)
	}
}

// A page of projects reads its own rows, not every project of the
// workspace (the window count once read them all on every page). A name
// filter's exact total reads every match (no counter can hold it), so only
// a selective name is checked here.
func TestProjectListReadsOnlyItsPage(t *testing.T) {
	st, db := singleConnStore(t)
	ctx := context.Background()
	ws := bootstrap(t, st, "Acme")
	if err := seed.Projects(ctx, db, ws.WorkspaceID, 4000); err != nil {
		t.Fatal(err)
	}
	for _, f := range []models.ProjectFilter{
		{Page: models.PageRequest{Page: 1, PerPage: 25}},
		{Page: models.PageRequest{Page: 100, PerPage: 25}},
		{Page: models.PageRequest{Page: 1, PerPage: 25}, TaskType: models.TaskTabularRegression},
		{Page: models.PageRequest{Page: 30, PerPage: 25}, TaskType: models.TaskTabularRegression},
		{Page: models.PageRequest{Page: 1, PerPage: 25}, Name: "-0001234"},
		{Page: models.PageRequest{Page: 500, PerPage: 25}},
	} {
		f.WorkspaceID = ws.WorkspaceID
		var page models.Page[models.Project]
		read := heapTuplesRead(t, db, "projects", func() {
			var err error
			if page, err = st.Projects("").List(ctx, f); err != nil {
				t.Fatal(err)
			}
		})
		if want := countProjects(t, db, f); page.Meta.TotalItems != want {
			t.Errorf("%+v: total %d, want %d", f, page.Meta.TotalItems, want)
		}
		if read > 2*int64(f.Page.PerPage)+10 {
			t.Errorf("%+v: read %d project rows for a page of %d", f, read, len(page.Items))
		}
	}
}

// deliveryFixture is a subscription with n records on a one-connection
// store.
type deliveryFixture struct {
	st  *store.Store
	db  *bun.DB
	ws  store.Credentials
	sub models.WebhookSubscription
}

func newDeliveryFixture(t *testing.T, singleConn bool) deliveryFixture {
	t.Helper()
	var f deliveryFixture
	if singleConn {
		f.st, f.db = singleConnStore(t)
	} else {
		f.st = store.New(pgtest.NewDB(t))
		f.db = f.st.DB()
	}
	f.ws = bootstrap(t, f.st, "Acme")
	f.sub = f.subscription(t)
	return f
}

func (f deliveryFixture) subscription(t *testing.T) models.WebhookSubscription {
	t.Helper()
	sub, err := f.st.Webhooks().Create(context.Background(), uuid.New(), models.NewWebhook{
		WorkspaceID: f.ws.WorkspaceID, CreatorID: f.ws.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
	}, []byte{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func (f deliveryFixture) list(t *testing.T, sub uuid.UUID, page, perPage int) models.Page[models.WebhookDelivery] {
	t.Helper()
	p, err := f.st.Deliveries().List(context.Background(), f.ws.WorkspaceID, sub, models.PageRequest{Page: page, PerPage: perPage})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f deliveryFixture) count(t *testing.T, sub uuid.UUID) int {
	t.Helper()
	n, err := f.db.NewSelect().TableExpr("webhook_deliveries").Where("subscription_id = ?", sub).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkTotal compares totalItems with a count on the first page and one
// past the end.
func (f deliveryFixture) checkTotal(t *testing.T, sub uuid.UUID) {
	t.Helper()
	want := f.count(t, sub)
	for _, page := range []int{1, want/25 + 2} {
		if got := f.list(t, sub, page, 25).Meta.TotalItems; got != want {
			t.Errorf("subscription %s page %d: total %d, want %d", sub, page, got, want)
		}
	}
}

// Record totals stay exact through concurrent records, the retention purge
// (in small batches), an event's deletion and another subscription's.
func TestDeliveryTotalsExact(t *testing.T) {
	f := newDeliveryFixture(t, false)
	ctx := context.Background()
	other := f.subscription(t)
	gone := f.subscription(t)
	f.checkTotal(t, f.sub.ID)

	old := time.Now().Add(-100 * 24 * time.Hour)
	var events []models.Event
	for range 5 {
		ev, err := f.st.Events().Create(ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	// 5 events × 8 attempts to three subscriptions, from 16 goroutines,
	// each attempt recorded twice (an activity that ran again).
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < 5*8*3*2; i += 16 {
				n := i / 2
				sub := []uuid.UUID{f.sub.ID, other.ID, gone.ID}[n%3]
				at := time.Now()
				if n%2 == 0 {
					at = old.Add(time.Duration(n) * time.Second)
				}
				if _, _, err := f.st.Deliveries().Record(ctx, models.WebhookDelivery{SubscriptionID: sub,
					EventID: events[n/3%5].ID, AttemptNumber: 1 + n/15, DateCreated: at}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, s := range []uuid.UUID{f.sub.ID, other.ID, gone.ID} {
		f.checkTotal(t, s)
	}
	// A subscription with records can be deleted (its counters go with it).
	if err := f.st.Webhooks().Delete(ctx, f.ws.WorkspaceID, gone.ID); err != nil {
		t.Fatal(err)
	}
	// The purge, three records at a time.
	for {
		n, err := f.st.Deliveries().DeleteOlderThan(ctx, time.Now().Add(-90*24*time.Hour), 3)
		if err != nil {
			t.Fatal(err)
		}
		if n < 3 {
			break
		}
	}
	f.checkTotal(t, f.sub.ID)
	f.checkTotal(t, other.ID)
	// An event's deletion removes its records by cascade.
	if _, err := f.db.ExecContext(ctx, `DELETE FROM events WHERE id = ?`, events[0].ID); err != nil {
		t.Fatal(err)
	}
	f.checkTotal(t, f.sub.ID)
	f.checkTotal(t, other.ID)
	// Bulk records.
	if err := seed.Deliveries(ctx, f.db, other.ID, 101); err != nil {
		t.Fatal(err)
	}
	f.checkTotal(t, f.sub.ID)
	f.checkTotal(t, other.ID)
	var left int
	if err := f.db.NewRaw(`SELECT count(*) FROM webhook_delivery_counts WHERE subscription_id = ?`, gone.ID).Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d counters of a deleted subscription left", left)
	}
}

// Pages of records follow (date_created DESC, id DESC) exactly, ties
// included, and cover every record once; empty and past-the-end pages
// carry the total.
func TestDeliveryPagesInOrder(t *testing.T) {
	f := newDeliveryFixture(t, false)
	ctx := context.Background()
	if got := f.list(t, f.sub.ID, 1, 25); got.Meta.TotalItems != 0 || len(got.Items) != 0 {
		t.Fatalf("empty subscription: %+v", got.Meta)
	}
	if err := seed.Deliveries(ctx, f.db, f.sub.ID, 300); err != nil {
		t.Fatal(err)
	}
	// Ties: forty records share one timestamp.
	if _, err := f.db.ExecContext(ctx, `UPDATE webhook_deliveries SET date_created = '2026-01-01T00:00:00Z'
		WHERE id IN (SELECT id FROM webhook_deliveries WHERE subscription_id = ? ORDER BY date_created LIMIT 40 OFFSET 100)`, f.sub.ID); err != nil {
		t.Fatal(err)
	}
	var want []uuid.UUID
	if err := f.db.NewRaw(`SELECT id FROM webhook_deliveries WHERE subscription_id = ? ORDER BY date_created DESC, id DESC`, f.sub.ID).Scan(ctx, &want); err != nil {
		t.Fatal(err)
	}
	for _, perPage := range []int{1, 7, 25, 100} {
		var got []uuid.UUID
		for page := 1; ; page++ {
			p := f.list(t, f.sub.ID, page, perPage)
			if p.Meta.TotalItems != 300 {
				t.Fatalf("perPage %d page %d: total %d", perPage, page, p.Meta.TotalItems)
			}
			if len(p.Items) == 0 {
				break
			}
			for _, d := range p.Items {
				if d.SubscriptionID != f.sub.ID || d.EventID == uuid.Nil || d.AttemptNumber == 0 {
					t.Fatalf("record %+v", d)
				}
				got = append(got, d.ID)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("perPage %d: pages do not follow the order", perPage)
		}
	}
	// Another workspace's subscription, and a missing one, are not found.
	if _, err := f.st.Deliveries().List(ctx, uuid.New(), f.sub.ID, models.PageRequest{Page: 1, PerPage: 25}); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("other workspace: %v", err)
	}
	if _, err := f.st.Deliveries().List(ctx, f.ws.WorkspaceID, uuid.New(), models.PageRequest{Page: 1, PerPage: 25}); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("missing subscription: %v", err)
	}
}

// A page of records reads its own rows from the heap, however deep it is
// and however many records the subscription holds (the window count once
// read, and buffered, every record on every page).
func TestDeliveryListReadsOnlyItsPage(t *testing.T) {
	f := newDeliveryFixture(t, true)
	ctx := context.Background()
	if err := seed.Deliveries(ctx, f.db, f.sub.ID, 6000); err != nil {
		t.Fatal(err)
	}
	for _, page := range []int{1, 2, 100, 240, 241} {
		var p models.Page[models.WebhookDelivery]
		read := heapTuplesRead(t, f.db, "webhook_deliveries", func() { p = f.list(t, f.sub.ID, page, 25) })
		if p.Meta.TotalItems != 6000 {
			t.Errorf("page %d: total %d", page, p.Meta.TotalItems)
		}
		if read > 60 {
			t.Errorf("page %d: read %d records for a page of %d", page, read, len(p.Items))
		}
	}
}

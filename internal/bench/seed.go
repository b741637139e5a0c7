package bench

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// openSeedDB connects for seeding: one INSERT of a million rows takes
// longer than the service's own 30-second read timeout.
func openSeedDB(dsn string) *bun.DB {
	sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn),
		pgdriver.WithReadTimeout(10*time.Minute), pgdriver.WithWriteTimeout(10*time.Minute)))
	sqldb.SetMaxOpenConns(2)
	return bun.NewDB(sqldb, pgdialect.New())
}

// projectsPageQuery is baseline Q: the rows of GET /v1/projects?perPage=25
// (page 1, newest first, every column) without any count.
const projectsPageQuery = `SELECT p.* FROM projects AS p WHERE p.workspace_id = $1
ORDER BY p.date_created DESC, p.id DESC LIMIT 25`

// seedProjects inserts n projects into a workspace with one INSERT …
// SELECT generate_series, one second apart and ending now, then VACUUM
// ANALYZE, so the planner sees the table as a long-lived database would.
func seedProjects(ctx context.Context, db *bun.DB, workspaceID string, n int) error {
	_, err := db.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, task_type, source, date_created, date_updated)
		SELECT gen_random_uuid(), ?, 'bench-' || lpad(i::text, 7, '0'),
			(ARRAY['llm-base', 'tabular-classification', 'tabular-regression', 'text-classification'])[1 + i % 4],
			'api', now() - make_interval(secs => ? - i), now() - make_interval(secs => ? - i)
		FROM generate_series(1, ?) AS i`, workspaceID, n, n, n)
	if err != nil {
		return fmt.Errorf("seed projects: %w", err)
	}
	_, err = db.ExecContext(ctx, `VACUUM (ANALYZE) projects`)
	return err
}

// seedDeliveries inserts n delivery records for a subscription: ceil(n/4)
// events of its workspace (already dispatched, so no sweeper starts them)
// with four attempts each, the first three failed, one millisecond apart
// and ending now; then VACUUM ANALYZE.
func seedDeliveries(ctx context.Context, db *bun.DB, subscriptionID string, n int) error {
	events := (n + 3) / 4
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TEMPORARY TABLE bench_events ON COMMIT DROP AS
			SELECT e AS n, gen_random_uuid() AS id FROM generate_series(0, ? - 1) AS e`, events); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, workspace_id, type, data, date_created, dispatched_at, recipients)
			SELECT be.id, s.workspace_id, 'test.created', '{}', now() - make_interval(secs => ?), now(), ARRAY[s.id]
			FROM bench_events AS be, webhook_subscriptions AS s WHERE s.id = ?`, float64(n)/1000, subscriptionID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number,
				success, status_code, response_body, response_time_ms, error_message, date_created)
			SELECT gen_random_uuid(), ?, be.id, a, a = 4, CASE WHEN a = 4 THEN 200 ELSE 500 END,
				CASE WHEN a = 4 THEN 'ok' ELSE 'internal error' END, 20 + a,
				CASE WHEN a = 4 THEN NULL ELSE 'HTTP 500' END,
				now() - make_interval(secs => (? - (be.n * 4 + a)) / 1000.0)
			FROM bench_events AS be, generate_series(1, 4) AS a
			WHERE be.n * 4 + a <= ?`, subscriptionID, n, n)
		if err != nil {
			return err
		}
		if got, _ := res.RowsAffected(); got != int64(n) {
			return fmt.Errorf("inserted %d records, want %d", got, n)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed deliveries: %w", err)
	}
	_, err = db.ExecContext(ctx, `VACUUM (ANALYZE) events, webhook_deliveries`)
	return err
}

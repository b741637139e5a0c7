// Package seed fills a migrated database fast for benchmarks and tests
// that need large tables (make bench, the store's pagination tests), and
// holds the baseline query the benchmark measures the projects list
// against. Nothing in the service calls it.
package seed

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ProjectsPageQuery is the baseline Q of the projects list: the first page
// of a workspace's projects (newest first, every column) without any count,
// exactly the rows `GET /v1/projects` returns for page 1. It takes one
// argument, the workspace id, as $1, and reads perPage 25. Run it at 32
// clients straight against PostgreSQL (database/sql or pgbench) to get Q:
//
//	rows, err := db.QueryContext(ctx, seed.ProjectsPageQuery, workspaceID)
const ProjectsPageQuery = `SELECT p.* FROM projects AS p WHERE p.workspace_id = $1
ORDER BY p.date_created DESC, p.id DESC LIMIT 25`

// syncCommit makes a seeding transaction's commit wait for its WAL to be
// flushed even where synchronous_commit is off (test clusters): until
// then no hint bit can record that the rows committed, and VACUUM cannot
// mark their pages all-visible, which index-only scans depend on.
const syncCommit = `SET LOCAL synchronous_commit = on`

// Projects inserts n projects into an existing workspace by INSERT …
// SELECT generate_series in batches of 20,000 (100,000 take a few seconds;
// the trigram index is most of it), then VACUUM ANALYZE projects so the
// planner and the visibility map are as a long-running database's would be. Names are "seed-<8 hex>-<i>"
// (i zero-padded to 7 digits, so "-0000042" matches one project of a
// batch), unique per call; task types cycle through the four; creation
// times are one second apart, ending now. The project counters are kept
// by the database's triggers, so the totals the API reports stay exact.
// The workspace's project cap is not checked.
func Projects(ctx context.Context, db *bun.DB, workspaceID uuid.UUID, n int) error {
	batch := uuid.NewString()[:8]
	// Batches keep each statement well inside the driver's read timeout.
	const perBatch = 20_000
	for lo := 1; lo <= n; lo += perBatch {
		hi := min(lo+perBatch-1, n)
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, syncCommit); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, task_type, source, date_created, date_updated)
				SELECT gen_random_uuid(), ?, 'seed-' || ? || '-' || lpad(i::text, 7, '0'),
					(ARRAY['llm-base', 'tabular-classification', 'tabular-regression', 'text-classification'])[1 + i % 4],
					'api', now() - make_interval(secs => ? - i), now() - make_interval(secs => ? - i)
				FROM generate_series(?, ?) AS i`, workspaceID, batch, n, n, lo, hi)
			return err
		})
		if err != nil {
			return fmt.Errorf("seed projects: %w", err)
		}
	}
	if _, err := db.ExecContext(ctx, `VACUUM (ANALYZE) projects`); err != nil {
		return fmt.Errorf("vacuum projects: %w", err)
	}
	return nil
}

// Deliveries inserts n delivery records for an existing webhook
// subscription, with the events they refer to, by INSERT … SELECT
// generate_series in batches of 100,000 records, each vacuumed, then
// ANALYZE of both tables (1,000,000 records take about 30 seconds). Each event gets four attempts
// (attempt numbers 1–4; the first three failed with a 500, the fourth
// succeeded with a 200), so n records refer to ceil(n/4) events of type
// "test.created" in the subscription's workspace, already dispatched.
// Records are one millisecond apart, ending now, so all stay inside any
// retention window a benchmark uses. The per-subscription record counter
// is kept by the database's triggers.
func Deliveries(ctx context.Context, db *bun.DB, subscriptionID uuid.UUID, n int) error {
	// Ids are sequential within a call (a random prefix, then the index), so
	// every index grows at its right edge instead of splitting pages at
	// random: several times faster than random uuids. Batches keep each
	// statement well inside the driver's read timeout.
	const perBatch = 25_000 // events, so 100,000 records
	eventPrefix, recordPrefix := uuid.NewString()[:8], uuid.NewString()[:8]
	events := (n + 3) / 4
	for lo := 0; lo < events; lo += perBatch {
		hi := min(lo+perBatch, events) - 1
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, syncCommit); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, workspace_id, type, data, date_created, dispatched_at)
				SELECT (? || '-0000-4000-8000-' || lpad(to_hex(e), 12, '0'))::uuid, s.workspace_id, 'test.created', '{}',
					now() - make_interval(secs => (? - e * 4) / 1000.0), now()
				FROM generate_series(?, ?) AS e, webhook_subscriptions AS s WHERE s.id = ?`,
				eventPrefix, n, lo, hi, subscriptionID); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number,
					success, status_code, response_body, response_time_ms, error_message, date_created)
				SELECT (? || '-0000-4000-8000-' || lpad(to_hex(e * 4 + a), 12, '0'))::uuid, ?,
					(? || '-0000-4000-8000-' || lpad(to_hex(e), 12, '0'))::uuid,
					a, a = 4, CASE WHEN a = 4 THEN 200 ELSE 500 END,
					CASE WHEN a = 4 THEN 'ok' ELSE 'internal error' END, 20 + a,
					CASE WHEN a = 4 THEN NULL ELSE 'HTTP 500' END,
					now() - make_interval(secs => (? - (e * 4 + a)) / 1000.0)
				FROM generate_series(?, ?) AS e, generate_series(1, 4) AS a
				WHERE e * 4 + a <= ?
				ORDER BY e, a`, recordPrefix, subscriptionID, eventPrefix, n, lo, hi, n)
			if err != nil {
				return err
			}
			if got, _ := res.RowsAffected(); got == 0 {
				return fmt.Errorf("inserted no records (is %s a subscription?)", subscriptionID)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed deliveries: %w", err)
		}
		// Vacuuming each batch (the visibility map skips the earlier ones)
		// keeps every statement short.
		if _, err := db.ExecContext(ctx, `VACUUM events, webhook_deliveries`); err != nil {
			return fmt.Errorf("vacuum deliveries: %w", err)
		}
	}
	if _, err := db.ExecContext(ctx, `ANALYZE events, webhook_deliveries`); err != nil {
		return fmt.Errorf("analyze deliveries: %w", err)
	}
	return nil
}

package bench

import (
	"database/sql"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// The scenarios seed with harness/seed (Projects,
// Deliveries), which keep the tables as a long-lived database's would
// (counters, visibility map, statistics).

// openSeedDB connects for seeding: one INSERT of a million rows takes
// longer than the service's own 30-second read timeout.
func openSeedDB(dsn string) *bun.DB {
	sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn),
		pgdriver.WithReadTimeout(10*time.Minute), pgdriver.WithWriteTimeout(10*time.Minute)))
	sqldb.SetMaxOpenConns(2)
	return bun.NewDB(sqldb, pgdialect.New())
}

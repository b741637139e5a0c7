// Package store is the service's PostgreSQL access through bun: the only
// package that writes SQL, it maps driver errors onto models errors.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/models"
)

// Store runs the service's queries, on the pool or, from RunInTx, in one
// transaction.
type Store struct {
	pool *bun.DB
	db   bun.IDB // pool, or the transaction of RunInTx
}

// New wraps an open database.
func New(db *bun.DB) *Store { return &Store{pool: db, db: db} }

// DB exposes the pool for migrations and tests.
func (s *Store) DB() *bun.DB { return s.pool }

// DefaultMaxConns is a process's pool size unless DATABASE_MAX_CONNS says
// otherwise: enough for the API's request concurrency and the worker's
// activity and relay concurrency on one host; every replica holds up to
// this many, so the database's max_connections bounds the replicas
// (docs/deployment.md#database-connections).
const DefaultMaxConns = 20

// Open connects to PostgreSQL with at most maxConns connections (0:
// DefaultMaxConns); timeouts keep a stuck database from holding requests
// forever.
func Open(dsn string, maxConns int) (*bun.DB, error) {
	if dsn == "" {
		return nil, errors.New("empty database URL")
	}
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	connector := pgdriver.NewConnector(
		pgdriver.WithDSN(dsn),
		pgdriver.WithDialTimeout(5*time.Second),
		pgdriver.WithReadTimeout(30*time.Second),
		pgdriver.WithWriteTimeout(30*time.Second),
		// A request's transaction holds its Idempotency-Key's row: if its
		// host vanishes without closing the socket, the server ends the
		// transaction after this, not when TCP keepalive notices (hours).
		// A DATABASE_URL parameter of the same name overrides it. (The hot
		// statements' generic plans are their functions' own setting:
		// migration 20261128000100.)
		withDefaultConnParams(map[string]any{
			"idle_in_transaction_session_timeout": "30s",
		}),
	)
	sqldb := sql.OpenDB(connector)
	// Idle connections are kept up to the bound: opening one costs the
	// server a process fork, far more than keeping it.
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	// Unknown columns are discarded so the previous release keeps working
	// against a schema a migration has just extended.
	return bun.NewDB(sqldb, pgdialect.New(), bun.WithDiscardUnknownColumns()), nil
}

// withDefaultConnParams sets the service's session parameters, unless the
// DSN sets one of them itself (?idle_in_transaction_session_timeout=1min),
// which then wins.
// The DSN's other query parameters stay unsent, as pgdriver.WithConnParams
// left them: pgdriver would send each as a SET, and libpq's client-side
// ones (target_session_attrs, channel_binding) would fail every
// connection.
func withDefaultConnParams(defaults map[string]any) pgdriver.Option {
	return func(c *pgdriver.Config) {
		params := maps.Clone(defaults)
		for k := range defaults {
			if v, ok := c.ConnParams[k]; ok {
				params[k] = v
			}
		}
		c.ConnParams = params
	}
}

// pgTime is t as PostgreSQL stores it (UTC, microseconds), so what a write
// returns equals what every later read returns.
func pgTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.PingContext(ctx) }

const (
	pgUniqueViolation      = "23505"
	pgForeignKeyViolation  = "23503"
	pgCheckViolation       = "23514"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgLockNotAvailable     = "55P03" // lock_timeout passed
)

// translate maps driver errors onto models errors. conflict is the error to
// report for a unique violation, since only the caller knows what clashed.
func translate(err error, conflict error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return models.ErrNotFound
	}
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		switch pgErr.Field('C') {
		case pgUniqueViolation:
			if conflict != nil {
				return conflict
			}
			return models.Conflict("conflict", "the resource already exists")
		case pgForeignKeyViolation:
			return models.ErrNotFound
		case pgCheckViolation:
			return &models.Error{Kind: models.ErrInvalid, Code: "invalid", Message: "a value is out of range"}
		case pgDeadlockDetected, pgSerializationFailure:
			// The same request made again succeeds: a 503, never a 500.
			return fmt.Errorf("store: %w: %w", models.ErrUnavailable, err)
		}
	}
	if unavailable(err) {
		return fmt.Errorf("store: %w: %w", models.ErrUnavailable, err)
	}
	return fmt.Errorf("store: %w", err)
}

// unavailable reports whether the database is unreachable or refusing work.
func unavailable(err error) bool {
	var netErr net.Error
	var pgErr pgdriver.Error
	switch {
	case errors.As(err, &pgErr):
		code := pgErr.Field('C')
		// 08: connection exception; 53: insufficient resources (too many
		// connections); 57P01-57P03: shutting down or starting up.
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53") ||
			code == "57P01" || code == "57P02" || code == "57P03"
	case errors.As(err, &netErr), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED):
		return true
	}
	return false
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// prepared runs the statements every publish and every delivery attempt
// make as server-side prepared statements. bun formats arguments into the
// SQL text, so PostgreSQL parses and plans each statement anew; for the
// attempt's two statements, large CTEs, that cost as much as running them (EXPLAIN
// ANALYZE: planning 0.4–0.6 ms against 0.3–0.5 ms of execution for the
// record, 0.2 against 0.2 ms for the state and lease). A prepared statement
// is parsed once per connection and planned once too (generic plans:
// Open).
// database/sql prepares each statement on every pool connection the first
// time it runs there.
type prepared struct {
	bun     *bun.DB // the pool: prepares, and scans rows as bun's queries do
	mu      sync.Mutex
	m       map[string]*sql.Stmt // by SQL text
	warming map[string]bool      // being prepared in the background
}

func newPrepared(db *bun.DB) *prepared {
	return &prepared{bun: db, m: map[string]*sql.Stmt{}, warming: map[string]bool{}}
}

// scanRow runs query (numbered) as a prepared statement on idb, the pool
// or a transaction of RunInTx (prepared once on that transaction's
// connection too), and scans its one row into dst as bun would. No row is
// sql.ErrNoRows.
func (p *prepared) scanRow(ctx context.Context, idb bun.IDB, dst any, query string, args ...any) error {
	used, err := p.scanRowOnce(ctx, idb, dst, query, args...)
	switch {
	case staleResultType(err):
		// A migration changed what the statement returns: PostgreSQL refuses
		// the old prepared form on every connection that holds it, so drop
		// it and prepare anew. In a transaction the error has aborted it:
		// the caller's retry (a client's, on a 5xx) prepares anew.
		p.forget(query, used)
	case stmtClosed(err) && !isTx(idb):
		// Another caller dropped the statement between our lookup and our
		// query (after such a migration): prepare anew.
		p.forget(query, used)
	default:
		return err
	}
	if !isTx(idb) {
		_, err = p.scanRowOnce(ctx, idb, dst, query, args...)
	}
	return err
}

// stmtClosed is database/sql's error for a statement closed meanwhile,
// which it does not export.
func stmtClosed(err error) bool { return err != nil && err.Error() == "sql: statement is closed" }

// staleResultType is PostgreSQL's "cached plan must not change result
// type": a prepared statement whose result columns a migration changed.
func staleResultType(err error) bool {
	var pgErr pgdriver.Error
	return errors.As(err, &pgErr) && pgErr.Field('C') == "0A000" && strings.Contains(pgErr.Field('M'), "cached plan")
}

func isTx(idb bun.IDB) bool {
	_, ok := idb.(bun.Tx)
	return ok
}

// forget drops the statement that failed, unless another caller has
// already put a newer one in its place.
func (p *prepared) forget(query string, failed *sql.Stmt) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.m[query]; ok && (failed == nil || s == failed) {
		s.Close()
		delete(p.m, query)
	}
}

// scanRowOnce returns the pool's statement it used (nil: none).
func (p *prepared) scanRowOnce(ctx context.Context, idb bun.IDB, dst any, query string, args ...any) (*sql.Stmt, error) {
	var rows *sql.Rows
	var used *sql.Stmt
	var err error
	if tx, ok := idb.(bun.Tx); ok {
		var done func()
		rows, used, done, err = p.queryInTx(ctx, tx, query, args)
		defer done() // after rows.Close, deferred below
	} else {
		if used, err = p.stmt(ctx, query); err == nil {
			rows, err = used.QueryContext(ctx, args...)
		}
	}
	if err != nil {
		return used, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return used, err
		}
		return used, sql.ErrNoRows
	}
	if err := p.bun.ScanRow(ctx, rows, dst); err != nil {
		return used, err
	}
	return used, rows.Close()
}

// queryInTx runs query on the transaction's own connection: prepared there
// if the pool has the statement, else as a plain query while the pool
// prepares it in the background. Preparing on the pool from here would
// wait for a second connection while the transaction holds one, and with
// every connection in such a transaction nothing would ever be freed.
// done releases the transaction's handle of the statement (its connection
// keeps the statement); call it once the rows are closed.
func (p *prepared) queryInTx(ctx context.Context, tx bun.Tx, query string, args []any) (rows *sql.Rows, used *sql.Stmt, done func(), err error) {
	stmt := p.lookup(query)
	if stmt == nil {
		p.warm(query)
		rows, err = tx.Tx.QueryContext(ctx, query, args...)
		return rows, nil, func() {}, err
	}
	txStmt := tx.Tx.StmtContext(ctx, stmt)
	rows, err = txStmt.QueryContext(ctx, args...)
	return rows, stmt, func() { txStmt.Close() }, err
}

func (p *prepared) lookup(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[query]
}

// stmt returns the pool's prepared statement, preparing it first if need
// be (on a free pool connection, without holding the lock meanwhile).
func (p *prepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s := p.lookup(query); s != nil {
		return s, nil
	}
	s, err := p.bun.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if won, ok := p.m[query]; ok { // another caller prepared it meanwhile
		s.Close()
		return won, nil
	}
	p.m[query] = s
	return s, nil
}

// warm prepares query on the pool in the background, once at a time.
func (p *prepared) warm(query string) {
	p.mu.Lock()
	if p.warming[query] {
		p.mu.Unlock()
		return
	}
	p.warming[query] = true
	p.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = p.stmt(ctx, query) // a failure is retried by the next transaction
		p.mu.Lock()
		delete(p.warming, query)
		p.mu.Unlock()
	}()
}

// numbered turns bun's placeholders into PostgreSQL's: ?N (0-based, bun's
// indexed form) into $N+1, and bare ? into $1, $2, … in order; a query
// mixes neither form. Each placeholder gets the cast types gives it, so
// the server infers no parameter type from its context (a parameter used
// in two contexts would get two types and fail to prepare).
func numbered(query string, types []string) string {
	var b strings.Builder
	next := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			b.WriteByte(query[i])
			continue
		}
		j := i + 1
		for j < len(query) && query[j] >= '0' && query[j] <= '9' {
			j++
		}
		n := next
		if j > i+1 {
			n, _ = strconv.Atoi(query[i+1 : j])
		} else {
			next++
		}
		if n >= len(types) {
			panic(fmt.Sprintf("store: placeholder %d has no type", n))
		}
		fmt.Fprintf(&b, "($%d::%s)", n+1, types[n])
		i = j - 1
	}
	return b.String()
}

package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"

	"github.com/uptrace/bun/driver/pgdriver"
)

// guardedConnector hands out pgdriver connections whose prepared
// statements close the connection when they fail other than with an
// error the server reported in step (a network error, a deadline
// mid-read): pgdriver closes a connection so for plain queries, not for
// prepared ones, and a connection cut short mid-answer would hand the rest
// of that answer to the next statement (TestPreparedStatementCutShort…).
// database/sql then discards the closed connection (IsValid).
type guardedConnector struct{ driver.Connector }

func (c guardedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := cn.(*pgdriver.Conn)
	if !ok {
		return cn, nil
	}
	return &guardedConn{Conn: pc}, nil
}

// guardedConn is a pgdriver connection (every interface it implements is
// promoted) whose prepared statements are guarded.
type guardedConn struct{ *pgdriver.Conn }

func (c *guardedConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *guardedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, c.check(err)
	}
	return &guardedStmt{Stmt: st, c: c}, nil
}

// check closes the connection unless err leaves it in step with the
// server: an error the server reported (not FATAL or PANIC), or the end of
// rows.
func (c *guardedConn) check(err error) error {
	var pgErr pgdriver.Error
	inStep := err == nil || errors.Is(err, io.EOF) ||
		(errors.As(err, &pgErr) && pgErr.Field('V') != "FATAL" && pgErr.Field('V') != "PANIC")
	if !inStep {
		_ = c.Conn.Close()
	}
	return err
}

type guardedStmt struct {
	driver.Stmt
	c *guardedConn
}

func (s *guardedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	r, err := s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	return r, s.c.check(err)
}

func (s *guardedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	r, err := s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, s.c.check(err)
	}
	return &guardedRows{Rows: r, c: s.c}, nil
}

type guardedRows struct {
	driver.Rows
	c *guardedConn
}

func (r *guardedRows) Next(dest []driver.Value) error { return r.c.check(r.Rows.Next(dest)) }

func (r *guardedRows) Close() error { return r.c.check(r.Rows.Close()) }

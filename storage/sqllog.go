package storage

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"time"

	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/logging"
)

// loggingConnector wraps a driver's connector so that every statement that
// reaches the database is logged with its shape and timing (--debug). It is
// used only when debug logging is on, so the usual path pays nothing.
type loggingConnector struct {
	driver.Connector
	label string
}

func (c loggingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	start := time.Now()
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		logging.Logger().Debug("sql connect", "db", c.label, "elapsed", time.Since(start), "err", err.Error())
		return nil, err
	}
	logging.Logger().Debug("sql connect", "db", c.label, "elapsed", time.Since(start))
	return &loggingConn{Conn: conn, label: c.label}, nil
}

// dsnConnector opens through a driver that has no connector of its own.
type dsnConnector struct {
	d   driver.Driver
	dsn string
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.d }

type loggingConn struct {
	driver.Conn
	label string
}

var spaces = &lazyre.Regexp{Expr: `\s+`}

// shape is a statement as logged: one line, values never included (they
// travel as arguments), long literal multi-row inserts cut short.
func shape(query string) string {
	q := strings.TrimSpace(spaces.Get().ReplaceAllString(query, " "))
	if len(q) > 1000 {
		q = q[:1000] + "… (" + itoa(len(query)) + " bytes)"
	}
	return q
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func (c *loggingConn) log(op, query string, args int, start time.Time, err error) {
	if errors.Is(err, driver.ErrSkip) {
		return
	}
	attrs := []any{"db", c.label, "op", op, "query", shape(query), "args", args, "elapsed", time.Since(start)}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	logging.Logger().Debug("sql", attrs...)
}

func (c *loggingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &loggingStmt{Stmt: st, conn: c, query: query}, nil
}

func (c *loggingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *loggingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	start := time.Now()
	res, err := e.ExecContext(ctx, query, args)
	c.log("exec", query, len(args), start, err)
	return res, err
}

func (c *loggingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	start := time.Now()
	rows, err := q.QueryContext(ctx, query, args)
	c.log("query", query, len(args), start, err)
	return rows, err
}

func (c *loggingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	start := time.Now()
	var tx driver.Tx
	var err error
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		//lint:ignore SA1019 the fallback database/sql itself uses
		tx, err = c.Conn.Begin()
	}
	c.log("begin", "BEGIN", 0, start, err)
	if err != nil {
		return nil, err
	}
	return &loggingTx{Tx: tx, conn: c}, nil
}

func (c *loggingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *loggingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *loggingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *loggingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type loggingTx struct {
	driver.Tx
	conn *loggingConn
}

func (t *loggingTx) Commit() error {
	start := time.Now()
	err := t.Tx.Commit()
	t.conn.log("commit", "COMMIT", 0, start, err)
	return err
}

func (t *loggingTx) Rollback() error {
	start := time.Now()
	err := t.Tx.Rollback()
	t.conn.log("rollback", "ROLLBACK", 0, start, err)
	return err
}

type loggingStmt struct {
	driver.Stmt
	conn  *loggingConn
	query string
}

func (s *loggingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	start := time.Now()
	var res driver.Result
	var err error
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		res, err = e.ExecContext(ctx, args)
	} else {
		//lint:ignore SA1019 the fallback for drivers without StmtExecContext, as database/sql's own
		res, err = s.Stmt.Exec(values(args))
	}
	s.conn.log("exec", s.query, len(args), start, err)
	return res, err
}

func (s *loggingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	start := time.Now()
	var rows driver.Rows
	var err error
	if q, ok := s.Stmt.(driver.StmtQueryContext); ok {
		rows, err = q.QueryContext(ctx, args)
	} else {
		//lint:ignore SA1019 the fallback for drivers without StmtQueryContext, as database/sql's own
		rows, err = s.Stmt.Query(values(args))
	}
	s.conn.log("query", s.query, len(args), start, err)
	return rows, err
}

func (s *loggingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return s.conn.CheckNamedValue(nv)
}

func values(args []driver.NamedValue) []driver.Value {
	v := make([]driver.Value, len(args))
	for i, a := range args {
		v[i] = a.Value
	}
	return v
}

package storage

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// The statements run on the pool outside a transaction are retried as Tx
// retries a transaction (Retry: oslo.db's policy): each is a transaction of
// its own, and on a Galera node a read can fail where a single server's
// would not: wsrep_sync_wait's causality wait times out as a lock wait
// (1205), and a node that lost the primary component answers 1047 until it
// is back. Only the statement's start is retried; once rows stream, an
// error ends the read (the caller cannot have kept half of them twice).
// QueryRowContext and QueryRowxContext stay as sqlx has them: their error
// arrives at Scan, after the point a retry could start from; GetContext is
// the retried single-row read.

// GetContext is sqlx's GetContext, retried.
func (db *DB) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return Retry(ctx, func() error { return db.DB.GetContext(ctx, dest, query, args...) })
}

// SelectContext is sqlx's SelectContext, retried (sqlx empties dest
// before it appends the rows).
func (db *DB) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return Retry(ctx, func() error { return db.DB.SelectContext(ctx, dest, query, args...) })
}

// QueryContext is database/sql's QueryContext, its start retried.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	var rows *sql.Rows
	err := Retry(ctx, func() (err error) {
		rows, err = db.DB.QueryContext(ctx, query, args...)
		return err
	})
	return rows, err
}

// QueryxContext is sqlx's QueryxContext, its start retried.
func (db *DB) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	var rows *sqlx.Rows
	err := Retry(ctx, func() (err error) {
		rows, err = db.DB.QueryxContext(ctx, query, args...)
		return err
	})
	return rows, err
}

// ExecContext is database/sql's ExecContext, retried: a statement that
// failed with a Retryable error was rolled back whole by the server.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := Retry(ctx, func() (err error) {
		res, err = db.DB.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

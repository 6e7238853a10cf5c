package storage

import (
	"context"
	"database/sql/driver"
	"errors"
)

// RawQuery runs a query inside RawReadTx's transaction and returns the
// driver's own rows: Next fills its destination with the row's values as
// the driver makes them ([]byte ones valid until the next call). On a
// database that ReadsScripts, a query without arguments may hold several
// SELECTs separated by semicolons: their rows come as the driver's
// result sets, one after the other (driver.RowsNextResultSet).
type RawQuery func(query string, args ...any) (driver.Rows, error)

// Prepared, as a RawQuery's first argument, runs the query as a prepared
// statement on MySQL even when it has no other argument: the binary
// protocol then carries numbers as the server holds them, where the text
// protocol has the server print each one and the client parse it back.
// Elsewhere it is ignored.
var Prepared = prepared{}

type prepared struct{}

// LastRead, as a RawQuery's first argument (before Prepared, if both),
// says no query of the transaction follows: on a database that
// ReadsScripts the query's script ends the transaction with its own
// ROLLBACK, in the same round trip, instead of one more round trip after
// fn returns (to a database 0.5 ms away that is 0.5 ms of every `rpctl
// candidates`; issue 35). A query after it runs outside the transaction.
// Elsewhere it is ignored.
var LastRead = lastRead{}

type lastRead struct{}

// RawReadTx is ReadTx for bulk reads that take every row as the driver
// hands it. database/sql's Rows takes a lock, checks the context and
// converts each column through Scan for every row, which bulk reads of a
// whole model need not pay. fn runs in one read-only
// transaction on one connection and, as with ReadTx, may run again.
func (db *DB) RawReadTx(ctx context.Context, fn func(query RawQuery) error) error {
	return Retry(ctx, func() error { return db.rawReadTx1(ctx, fn) })
}

func (db *DB) rawReadTx1(ctx context.Context, fn func(query RawQuery) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return db.Errorf("connect: %w", CleanError(err))
	}
	defer conn.Close()
	return conn.Raw(func(dc any) (fnErr error) {
		begin, ok := dc.(driver.ConnBeginTx)
		queryer, ok2 := dc.(driver.QueryerContext)
		preparer, ok3 := dc.(driver.ConnPrepareContext)
		if !ok || !ok2 || !ok3 {
			return db.Errorf("the %T driver cannot run bulk reads", dc)
		}
		// On a connection that takes scripts (ReadsScripts) the
		// transaction starts in the first query's round trip, pending
		// until then, and ends with a ROLLBACK of its own; elsewhere the
		// driver starts it, one round trip, and rolls it back.
		pending, ended := "", false
		if db.readScripts {
			pending = "START TRANSACTION READ ONLY"
			defer func() {
				// Nothing was sent, or the last script ended the
				// transaction (unless fn failed: a script stops at a
				// failed statement, before its ROLLBACK).
				if pending != "" || (ended && fnErr == nil) {
					return
				}
				// As tx.Rollback, whose error is not reported either: a
				// lost connection is not used again, and the server
				// ends its transaction.
				if rows, err := queryer.QueryContext(ctx, "ROLLBACK", nil); err == nil {
					rows.Close()
				}
			}()
		} else {
			tx, err := begin.BeginTx(ctx, driver.TxOptions{ReadOnly: db.IsMySQL()})
			if err != nil {
				return db.Errorf("begin transaction: %w", CleanError(err))
			}
			defer tx.Rollback()
		}
		return fn(func(query string, args ...any) (driver.Rows, error) {
			last := false
			if len(args) > 0 && args[0] == LastRead {
				last, args = true, args[1:]
			}
			prepare := false
			if len(args) > 0 && args[0] == Prepared {
				prepare, args = db.IsMySQL(), args[1:]
			}
			ends := last && db.readScripts && !prepare && len(args) == 0
			if ends {
				query, ended = query+"; ROLLBACK", true
			}
			if pending != "" {
				if !prepare && len(args) == 0 {
					query, pending = pending+"; "+query, ""
				} else {
					// A prepared statement holds one statement: the
					// start goes first, on its own.
					rows, err := queryer.QueryContext(ctx, pending, nil)
					if err != nil {
						return nil, err
					}
					rows.Close()
					pending = ""
				}
			}
			named := make([]driver.NamedValue, len(args))
			for i, a := range args {
				v, err := driver.DefaultParameterConverter.ConvertValue(a)
				if err != nil {
					return nil, err
				}
				named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
			}
			if !prepare {
				rows, err := queryer.QueryContext(ctx, query, named)
				if ends {
					if err != nil {
						ended = false
						return nil, err
					}
					// A statement of the script that failed unread
					// shows only as Close's error: the script stopped
					// there, before its ROLLBACK. Rows that cannot
					// tell (a wrapping driver's) get the ROLLBACK after
					// fn as well, which ends nothing more.
					sr, ok := rows.(scriptRows)
					if !ok {
						ended = false
						return rows, nil
					}
					return &endingRows{sr, &ended}, nil
				}
				if !errors.Is(err, driver.ErrSkip) {
					return rows, err
				}
			}
			// The driver binds arguments only in a prepared statement
			// (go-sql-driver without interpolateParams), as database/sql
			// would then do.
			stmt, err := preparer.PrepareContext(ctx, query)
			if err != nil {
				return nil, err
			}
			sq, ok := stmt.(driver.StmtQueryContext)
			if !ok {
				stmt.Close()
				return nil, db.Errorf("the %T driver cannot run bulk reads", dc)
			}
			rows, err := sq.QueryContext(ctx, named)
			if err != nil {
				stmt.Close()
				return nil, err
			}
			return stmtRows{rows, stmt}, nil
		})
	})
}

// scriptRows are the rows of a script: its statements' result sets.
type scriptRows interface {
	driver.Rows
	driver.RowsNextResultSet
}

// endingRows are the rows of a script that ends the transaction
// (LastRead): a failure Close meets means its ROLLBACK did not run.
type endingRows struct {
	scriptRows
	ended *bool
}

func (r *endingRows) Close() error {
	err := r.scriptRows.Close()
	if err != nil {
		*r.ended = false
	}
	return err
}

// stmtRows closes its statement with the rows.
type stmtRows struct {
	driver.Rows
	stmt driver.Stmt
}

func (r stmtRows) Close() error {
	err := r.Rows.Close()
	if serr := r.stmt.Close(); err == nil {
		err = serr
	}
	return err
}

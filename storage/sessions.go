package storage

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// SessionError is a failed transaction with the server session (MySQL
// CONNECTION_ID) that ran it. When the connection died during COMMIT (a
// killed session, a lost server) the client cannot know whether the server
// committed; WaitSessionsGone tells when the server has finished with the
// session, after which reading back gives the answer.
type SessionError struct {
	Session int64
	Err     error
}

func (e *SessionError) Error() string { return e.Err.Error() }
func (e *SessionError) Unwrap() error { return e.Err }

// SessionTx is Tx remembering the session of the last try, returned in a
// SessionError when the transaction fails (MySQL only).
func (db *DB) SessionTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	var session int64
	err := Retry(ctx, func() error {
		session = 0
		return db.tx1(ctx, func(tx *sqlx.Tx) error {
			if db.IsMySQL() {
				if err := tx.GetContext(ctx, &session, "SELECT CONNECTION_ID()"); err != nil {
					return db.Errorf("begin transaction: %w", CleanError(err))
				}
			}
			return fn(tx)
		})
	})
	if err != nil && session != 0 {
		return &SessionError{Session: session, Err: err}
	}
	return err
}

// WaitSessionsGone waits until none of the given server sessions is in the
// process list any more: a killed session goes on until its rollback or
// commit is over, and only then does a read-back show what it left. It
// polls (the server has no notification for it) until ctx ends; a query
// that fails is tried again a few times (the failure may be the very
// trouble that killed the sessions) before the wait gives up with it.
func WaitSessionsGone(ctx context.Context, db *DB, sessions []int64) error {
	if len(sessions) == 0 || !db.IsMySQL() {
		return nil
	}
	args := make([]any, len(sessions))
	for i, s := range sessions {
		args[i] = s
	}
	q := "SELECT COUNT(*) FROM information_schema.processlist WHERE id IN (?" + strings.Repeat(", ?", len(sessions)-1) + ")"
	failures := 0
	for {
		var n int
		err := db.GetContext(ctx, &n, q, args...)
		switch {
		case err == nil && n == 0:
			return nil
		case err != nil:
			if failures++; failures >= 3 || ctx.Err() != nil {
				return db.Errorf("wait for sessions %v to end: %w", sessions, CleanError(err))
			}
		}
		select {
		case <-ctx.Done():
			return db.Errorf("wait for sessions %v to end: %w", sessions, CleanError(ctx.Err()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// InDoubt reports a failed transaction after which the server may have
// committed it or not: the connection was lost or killed, so no verdict of
// the server's reached the client. Such a failure is neither retried as a
// whole (it may have committed) nor split into smaller transactions (they
// would meet what it wrote); the caller reads back once WaitSessionsGone.
func InDoubt(err error) bool {
	if err == nil {
		return false
	}
	switch errNumber(err) {
	case 1927, // connection was killed
		1053, // server shutdown in progress
		2006, // server has gone away
		2013: // lost connection during query
		return true
	}
	var ne net.Error
	return errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) || errors.As(err, &ne)
}

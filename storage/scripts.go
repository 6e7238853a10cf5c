package storage

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// scriptPool is a second connection pool to the same MySQL server whose
// connections accept several statements per round trip.
type scriptPool struct {
	dsn  string // the first pool's
	once sync.Once
	db   *sqlx.DB
	err  error
}

// TakesScripts reports whether ScriptConn can give db a connection for
// several statements per query: a MySQL or MariaDB server opened by Open.
// On a Galera node a brute-force abort (a replicated write winning a
// conflict) can end a script's transaction between two of its statements,
// or silently inside one, and MariaDB 10.11 then runs the rest of the
// script in autocommit mode with no error (the Galera race test caught an
// inventories row committed on its own after its provider's insert was
// rolled back; TestGaleraScriptAborts reproduces it). So there the scripts
// guard every write with @@in_transaction and check after each COMMIT that
// the transaction replicated (placementdb's scriptGuard, issue 35), and
// ScriptConn gives none when the server lacks what they use (MySQL-based
// Galera, a session without autocommit): ErrNoScripts, the statement path.
func (db *DB) TakesScripts() bool {
	return db.IsMySQL() && db.scripts != nil
}

// ErrNoScripts is ScriptConn's answer for a database that cannot take
// several statements in one round trip (see TakesScripts): the caller
// sends them one by one.
var ErrNoScripts = errors.New("database takes one statement per round trip")

// ScriptConn returns a connection on which one query may carry several
// statements, separated by semicolons (go-sql-driver's multiStatements),
// from a second pool of the same server and settings (a Galera node's
// causality wait included), opened on first use and closed with db.
//
// It exists so that many small transactions can be sent in one round trip
// each way: a round trip per statement, not the server's work, is what
// makes one transaction per row slow. The pool is separate so that no other
// statement of rpctl's ever runs on a connection that would execute a
// second statement smuggled into its text. Whoever sends a script must
// leave no transaction open on the connection: a later START TRANSACTION
// would commit it.
func (db *DB) ScriptConn(ctx context.Context) (*sql.Conn, error) {
	if !db.TakesScripts() {
		return nil, ErrNoScripts
	}
	p := db.scripts
	p.once.Do(func() {
		cfg, err := mysql.ParseDSN(p.dsn)
		if err != nil {
			p.err = err
			return
		}
		cfg.MultiStatements = true
		var x *DB
		// No ping: a server that cannot be reached now is the error of
		// this call's Conn below, not of every later one.
		if x, p.err = openPool(ctx, db.Target, db.Role, db.Name, cfg.FormatDSN(), false); p.err != nil {
			return
		}
		p.db = x.DB
		if db.Galera && !guardsWork(ctx, p.db) {
			p.err = ErrNoScripts
		}
	})
	if p.err != nil {
		return nil, p.err
	}
	c, err := p.db.Conn(ctx)
	if err != nil {
		return nil, db.Errorf("connect: %w", CleanError(err))
	}
	return c, nil
}

// guardsWork reports whether a Galera node's script session has what the
// scripts' guards use (see TakesScripts): @@in_transaction (MariaDB 10.3
// on), WSREP_LAST_WRITTEN_GTID() and autocommit on, without which a guard
// would let a statement after a brute-force abort write outside the
// transaction. Any failure answers no: the statement path is always right.
func guardsWork(ctx context.Context, x *sqlx.DB) bool {
	var inTrx, autocommit sql.NullInt64
	var gtid sql.NullString
	err := x.QueryRowContext(ctx, "SELECT @@in_transaction, @@autocommit, WSREP_LAST_WRITTEN_GTID()").Scan(&inTrx, &autocommit, &gtid)
	return err == nil && inTrx.Valid && inTrx.Int64 == 0 && autocommit.Int64 == 1 && gtid.Valid
}

// Close closes the database's pools.
func (db *DB) Close() error {
	err := db.DB.Close()
	if p := db.scripts; p != nil {
		// Wait for an opening in progress; later ones find err set.
		p.once.Do(func() { p.err = errors.New("database closed") })
		if p.db != nil {
			err = errors.Join(err, p.db.Close())
		}
	}
	return err
}

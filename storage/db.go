// Package storage owns every SQL statement rpctl runs: opening the Nova cell,
// Nova API and Placement databases (MariaDB/MySQL or the embedded SQLite
// file), creating their schemas, and the queries the domain packages need.
// Domain packages receive plain Go values from here and never see SQL.
package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/logging"
)

// Role says which of Nova's and Placement's databases a handle is, so that
// errors can tell the operator which connection to fix.
type Role string

// The databases rpctl uses.
const (
	RoleCell      Role = "cell"
	RoleAPI       Role = "API"
	RolePlacement Role = "Placement"
)

// DB is an open database of one role.
type DB struct {
	*sqlx.DB
	Role Role
	Name string // cell name for RoleCell, else ""
	// MappingUUID is the cell mapping's uuid of a cell opened from the API
	// database's cell_mappings, else "".
	MappingUUID string
	Target      dsn.Target
	// Galera is set when the server is a Galera cluster node (wsrep_on
	// with a provider): its sessions then read with wsrep_sync_wait.
	Galera bool
	// ReadOnly is an SQLite file opened without write access (a file or
	// directory this process may not write): reads work, a write fails.
	ReadOnly bool

	// scripts is the second pool ScriptConn opens, from the DSN this pool
	// was opened with, on first use (MySQL only).
	scripts *scriptPool
	// readScripts: this pool's own connections take several statements
	// per query (OpenReadScripts), and RawReadTx uses them so.
	readScripts bool
}

// IsMySQL reports whether the database is MySQL/MariaDB (else SQLite).
func (db *DB) IsMySQL() bool { return db.Target.Driver == dsn.MySQL }

// Label names the database for messages: `cell "cell1" database
// (mysql://nova:***@db/nova)`.
func (db *DB) Label() string {
	if db.Role == RoleCell && db.Name != "" {
		return fmt.Sprintf("cell %q database (%s)", db.Name, db.Target.Redacted)
	}
	return fmt.Sprintf("%s database (%s)", db.Role, db.Target.Redacted)
}

// quietDriver stops go-sql-driver from logging connection errors itself,
// on stderr, besides returning them: rpctl reports the returned error once,
// in one line. Done on first Open, not at init.
func quietDriver() { quietOnce.Do(func() { mysql.SetLogger(log.New(io.Discard, "", 0)) }) }

var quietOnce sync.Once

// ConnectTimeout bounds how long Open waits for a dead server.
var ConnectTimeout = 10 * time.Second

// Open connects to t and checks the server answers. The error names the role
// and the redacted URL, never the password.
func Open(ctx context.Context, t dsn.Target, role Role, name string) (*DB, error) {
	return open(ctx, t, role, name, false)
}

// OpenReadScripts is Open for a database that is only read, through
// RawReadTx (and the statements Open and a failed read's schema lookup
// run): on MySQL, other than a Galera node, its connections take several
// statements per query (go-sql-driver's multiStatements), and RawReadTx
// sends its transaction's start with the first query and each query's
// statements in one round trip (ReadsScripts). ScriptConn keeps such
// connections in a pool of their own so that no statement carrying
// values written into its text runs where a second statement could be
// smuggled in; the reads sent here carry values only as
// sqlutil.AppendLiteral writes them (quoted, refused when they hold a
// backslash or NUL: the text means the same in every sql_mode) or bound,
// and `rpctl candidates` takes them from a request Placement's own
// schema has validated (UUIDs, class and trait names). One pool instead
// of two saves the second connection's handshake: two round trips.
func OpenReadScripts(ctx context.Context, t dsn.Target, role Role, name string) (*DB, error) {
	return open(ctx, t, role, name, true)
}

// ReadsScripts reports whether RawReadTx's queries may hold several
// statements separated by semicolons: the database was opened by
// OpenReadScripts on a MySQL server that is not a Galera node.
func (db *DB) ReadsScripts() bool { return db.readScripts }

func open(ctx context.Context, t dsn.Target, role Role, name string, readScripts bool) (*DB, error) {
	quietDriver()
	driverDSN := t.DSN
	var cfg *mysql.Config
	if t.Driver == dsn.MySQL {
		var err error
		if cfg, err = mysql.ParseDSN(t.DSN); err != nil {
			return nil, fmt.Errorf("%s database (%s): %v", role, t.Redacted, err)
		}
		if cfg.Timeout == 0 {
			cfg.Timeout = ConnectTimeout
		}
		cfg.MultiStatements = readScripts
		driverDSN = cfg.FormatDSN()
	}
	readOnly := false
	if t.Driver == dsn.SQLite && t.Database != ":memory:" {
		// A file this process may not write (its mode, a read-only mount,
		// another user's directory) is still read: opening it as usual sets
		// WAL mode, which writes, and fails every command.
		if f, d := writable(t.Database), writable(filepath.Dir(t.Database)); exists(t.Database) && (!f || !d) {
			driverDSN, readOnly = dsn.SQLiteReadOnly(t.Database, d), true
		}
	}
	db, err := openPool(ctx, t, role, name, driverDSN, cfg == nil)
	if err != nil {
		return nil, err
	}
	db.ReadOnly = readOnly
	if cfg == nil {
		return db, nil
	}
	galera, err := probeGalera(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if !galera {
		db.readScripts = readScripts
		return db, nil
	}
	// A Galera node applies the other nodes' writes asynchronously: without
	// a causality wait a read can miss what another node has committed (a
	// count right after sample-cloud on another node read 0). Every
	// session of rpctl either feeds a write or reports status, so all of
	// them wait (wsrep_sync_wait bit 1: reads, SHOW and BEGIN).
	db.Close()
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, set := cfg.Params["wsrep_sync_wait"]; !set {
		cfg.Params["wsrep_sync_wait"] = GaleraSyncWait
	}
	// Arguments are written into the statement text by the driver rather
	// than sent to a server-side prepared statement: when another node's
	// commit brute-force aborts a transaction of this node around a
	// prepared statement, the server has been seen to run that statement
	// and the next ones outside the transaction with no error (a read
	// returned the other node's row), where a plain query reports the
	// abort as error 1213, which is retried (TestGaleraAbortsNeverSilent).
	cfg.InterpolateParams = true
	// Nor several statements per query: a brute-force abort can end the
	// transaction between two of them (TakesScripts).
	cfg.MultiStatements = false
	driverDSN = cfg.FormatDSN()
	if db, err = openPool(ctx, t, role, name, driverDSN, true); err != nil {
		return nil, err
	}
	db.Galera = true
	return db, nil
}

// writable is access(2)'s W_OK for path: what this process may write,
// root and read-only mounts included.
func writable(path string) bool { return syscall.Access(path, 2) == nil }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// GaleraSyncWait is the wsrep_sync_wait rpctl's sessions on a Galera node
// use (unless the URL sets its own): 1 makes every read wait until the
// node has applied all that the cluster committed before it.
const GaleraSyncWait = "1"

// probeGalera connects and reports whether the server runs wsrep with a
// provider loaded. Its query is also the check that the server answers: a
// ping before it was one more round trip of every command. When the query
// fails (a server without wsrep, such as MySQL, has no such variables) a
// ping tells a dead server, reported as openPool reports it, from one that
// is not Galera.
func probeGalera(ctx context.Context, db *DB) (bool, error) {
	pctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	var on sql.NullInt64
	var provider sql.NullString
	if err := db.QueryRowContext(pctx, "SELECT @@wsrep_on, @@wsrep_provider").Scan(&on, &provider); err != nil {
		if err := db.PingContext(pctx); err != nil {
			return false, db.Errorf("cannot connect: %w", CleanError(err))
		}
		return false, nil
	}
	return on.Int64 == 1 && provider.Valid && provider.String != "" && provider.String != "none", nil
}

// openPool opens driverDSN and, when ping is set, checks the server answers.
func openPool(ctx context.Context, t dsn.Target, role Role, name, driverDSN string, ping bool) (*DB, error) {
	x, err := sqlx.Open(t.Driver, driverDSN)
	if err != nil {
		return nil, fmt.Errorf("%s database (%s): %v", role, t.Redacted, err)
	}
	if logging.Debug() {
		// The same driver behind a connector that logs every statement;
		// sqlx keeps the driver's name for its bind style.
		d := x.Driver()
		x.Close()
		var conn driver.Connector = dsnConnector{d, driverDSN}
		if dc, ok := d.(driver.DriverContext); ok {
			if conn, err = dc.OpenConnector(driverDSN); err != nil {
				return nil, fmt.Errorf("%s database (%s): %v", role, t.Redacted, err)
			}
		}
		label := string(role) + " " + t.Redacted
		if name != "" {
			label = fmt.Sprintf("cell %q %s", name, t.Redacted)
		}
		x = sqlx.NewDb(sql.OpenDB(loggingConnector{conn, label}), t.Driver)
	}
	db := &DB{DB: x, Role: role, Name: name, Target: t}
	if t.Driver == dsn.MySQL {
		db.scripts = &scriptPool{dsn: driverDSN}
	}
	if t.Driver == dsn.SQLite {
		// One writer at a time is SQLite's model; a single connection also
		// keeps ":memory:" databases from splitting into several.
		x.SetMaxOpenConns(1)
	} else {
		x.SetMaxOpenConns(32)
		x.SetMaxIdleConns(32)
		x.SetConnMaxLifetime(5 * time.Minute)
	}
	if !ping {
		return db, nil
	}
	pctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if err := x.PingContext(pctx); err != nil {
		x.Close()
		return nil, db.Errorf("cannot connect: %w", CleanError(err))
	}
	return db, nil
}

// Errorf prefixes an error with the database's label.
func (db *DB) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", db.Label(), fmt.Errorf(format, args...))
}

// CleanError shortens driver errors to the one line an operator needs.
func CleanError(err error) error {
	if err == nil {
		return nil
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return &DBError{Number: me.Number, Msg: fmt.Sprintf("MySQL error %d: %s", me.Number, me.Message)}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("timed out")
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	// The cause stays reachable (errors.Is), so that a lost connection can
	// still be told from the server's verdict (InDoubt).
	return &firstLine{msg, err}
}

type firstLine struct {
	msg string
	err error
}

func (e *firstLine) Error() string { return e.msg }
func (e *firstLine) Unwrap() error { return e.err }

// Tx runs fn in a transaction, committing when fn returns nil. A deadlock,
// lock wait timeout, Galera certification failure or not-ready node (see
// Retryable) rolls back and runs the whole of fn again, as oslo.db's
// wrap_db_retry does for Nova's and Placement's writers; fn must therefore
// start from scratch each time it is called.
func (db *DB) Tx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return Retry(ctx, func() error { return db.tx1(ctx, fn) })
}

// EnsureTx is Tx for a transaction that creates a row only when its read
// found none (Nova's and Placement's "ensure" pattern: the incomplete
// consumer's project, Nova's fake instance, quota rows moved to the API
// database, a claim's consumer, project and user). A duplicate key then
// means another run, through this node or another Galera node, created
// the row after the read: the whole of fn runs again, and its fresh read
// finds the other run's row. Nova and Placement fail such a run; an
// operator running two at once expects both to finish.
func (db *DB) EnsureTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return db.Tx(ctx, func(tx *sqlx.Tx) error {
		err := fn(tx)
		if IsDuplicate(err) {
			return fmt.Errorf("%w: %w", err, ErrRetry)
		}
		return err
	})
}

// tx1 is one try of Tx.
func (db *DB) tx1(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return db.Errorf("begin transaction: %w", CleanError(err))
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return db.Errorf("commit: %w", CleanError(err))
	}
	return nil
}

// Rebind converts '?' placeholders to the driver's form.
func (db *DB) Rebind(q string) string { return db.DB.Rebind(q) }

// tableExists reports whether a table is present.
func (db *DB) TableExists(ctx context.Context, table string) (bool, error) {
	var n int
	var err error
	if db.IsMySQL() {
		err = db.GetContext(ctx, &n, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`, table)
	} else {
		err = db.GetContext(ctx, &n, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table)
	}
	if err != nil {
		return false, db.Errorf("look up table %s: %w", table, CleanError(err))
	}
	return n > 0, nil
}

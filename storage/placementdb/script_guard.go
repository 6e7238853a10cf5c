package placementdb

import (
	"errors"
	"strconv"

	"github.com/go-sql-driver/mysql"
)

// scriptGuard is what a script needs on a Galera node (true there): a
// brute-force abort (another node's commit winning a conflict) rolls the
// script's transaction back, and MariaDB then runs the script's next
// statements in autocommit mode with no error (TestGaleraScriptAborts,
// docs/galera.md). So every write carries @@in_transaction = 1, true only
// inside the script's explicit transaction, and writes nothing after an
// abort; and since an abort after the last write leaves a COMMIT that
// commits nothing and fails nothing, each item reads
// WSREP_LAST_WRITTEN_GTID() before its transaction and raises 1213 after
// its COMMIT when that did not move. The 1213 is what the readers retry
// (writeScripts) or redo alone through the statement path (the inventory
// and trait batches' callers). Every item's transaction writes a row (its
// providers' inserts or its generation update), so the GTID moves when it
// committed (a removal, which may rightly write nothing, checks only when
// it meant to write: commitIf). Elsewhere (false) the script is as before.
type scriptGuard bool

// gtidCheck raises 1213 when the transaction just committed wrote nothing:
// it was rolled back by a brute-force abort.
const gtidCheck = "BEGIN NOT ATOMIC IF WSREP_LAST_WRITTEN_GTID() <=> @rpctl_gtid THEN " + gtidSignal

const gtidSignal = "SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = '" + gtidMessage + "'; END IF; END;\n"

// gtidMessage is the text of the 1213 gtidCheck raises, by which
// gtidCheckFailed tells it from a deadlock a statement met.
const gtidMessage = "transaction rolled back by a brute-force abort"

// gtidCheckFailed reports whether err is the 1213 of an item's GTID check
// (not a statement's deadlock or certification failure). The check can be
// wrong the other way: WSREP_LAST_WRITTEN_GTID() has been seen not to move
// after a COMMIT that did write (TestGaleraConcurrentMigrations: a node's
// providers committed by the run whose check raised this, which then met
// its own rows as another writer's; and on a server that is not a Galera
// node it never moves), so a reader that can tell from the rows whether
// the item committed asks them (writeScripts' probes).
func gtidCheckFailed(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1213 && me.Message == gtidMessage
}

// begin appends START TRANSACTION, after the GTID read when guarded.
func (g scriptGuard) begin(b []byte) []byte {
	if g {
		b = append(b, "SET @rpctl_gtid = WSREP_LAST_WRITTEN_GTID();\n"...)
	}
	return append(b, "START TRANSACTION;\n"...)
}

// commit appends COMMIT, the GTID check when guarded, and marker k.
func (g scriptGuard) commit(b []byte, k int) []byte {
	b = append(b, "COMMIT;\n"...)
	if g {
		b = append(b, gtidCheck...)
	}
	b = strconv.AppendInt(append(b, "SELECT "...), int64(k), 10)
	return append(b, ";\n"...)
}

// commitIf is commit for a transaction that writes only when cond (an SQL
// condition on the session variables it set) holds: the GTID check is
// made only then.
func (g scriptGuard) commitIf(b []byte, k int, cond string) []byte {
	b = append(b, "COMMIT;\n"...)
	if g {
		b = append(append(append(b, "BEGIN NOT ATOMIC IF WSREP_LAST_WRITTEN_GTID() <=> @rpctl_gtid AND ("...), cond...), ") THEN "...)
		b = append(b, gtidSignal...)
	}
	b = strconv.AppendInt(append(b, "SELECT "...), int64(k), 10)
	return append(b, ";\n"...)
}

// and appends the guard to the WHERE clause of an UPDATE or DELETE just
// written.
func (g scriptGuard) and(b []byte) []byte {
	if g {
		b = append(b, " AND @@in_transaction = 1"...)
	}
	return b
}

// An INSERT's rows: "VALUES (r1), (r2)" unguarded, "SELECT r1 FROM DUAL
// WHERE guard UNION ALL SELECT r2 FROM DUAL WHERE guard" guarded. values
// follows the column list; each row is open, its values, close; rows are
// separated by sep.
func (g scriptGuard) values(b []byte) []byte {
	if g {
		return b
	}
	return append(b, "VALUES "...)
}

func (g scriptGuard) open(b []byte) []byte {
	if g {
		return append(b, "SELECT "...)
	}
	return append(b, '(')
}

func (g scriptGuard) close(b []byte) []byte {
	if g {
		return append(b, " FROM DUAL WHERE @@in_transaction = 1"...)
	}
	return append(b, ')')
}

func (g scriptGuard) sep() string {
	if g {
		return " UNION ALL "
	}
	return ", "
}

package galeratest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/testdb"
)

// TestGaleraScriptAborts measures what a brute-force abort does to a
// script (several statements in one COM_QUERY, as storage.ScriptConn
// sends them on plain MariaDB) on a Galera node, and whether guarding the
// script's writes makes it safe (issue 35). Each try runs on node 2 a
// script that writes a key in r, then rows in s, in one transaction, and
// commits the same key through node 1 while the script runs: node 1's
// write set brute-force aborts the script's transaction on node 2.
//
// What the unguarded cases establish (MariaDB 10.11 + Galera 4): the
// server rolls the script's transaction back but goes on with the
// script's next statements, in autocommit mode, and the script ends with
// no error: the rows of s written after the abort are committed on their
// own, the key in r is node 1's. An abort landing in a statement (a
// SLEEP here) ends that statement early and silently, so the window is as
// wide as the script.
//
// The guarded cases test the fix rpctl's scripts carry on Galera
// (placementdb's scriptGuard): every write carries the condition
// @@in_transaction = 1 (true only inside the script's explicit
// transaction; an autocommit statement sees 0), so nothing is written
// outside it; and since an abort in the last gap, before COMMIT, leaves a
// COMMIT that commits nothing and fails nothing, the script reads
// WSREP_LAST_WRITTEN_GTID() before its transaction and raises 1213 after
// its COMMIT when that did not move (its transaction wrote nothing). Every
// aborted try must then end in an error and write nothing.
func TestGaleraScriptAborts(t *testing.T) {
	g := testdb.NewGalera(t)
	g.NewDatabase(t, "scripts")
	ctx := context.Background()
	winner := g.Open(t, 0, "scripts")
	check := g.Open(t, 1, "scripts")
	for _, q := range []string{
		`CREATE TABLE r (id INT AUTO_INCREMENT PRIMARY KEY, u VARCHAR(64) NOT NULL UNIQUE, who VARCHAR(8) NOT NULL) ENGINE=InnoDB`,
		`CREATE TABLE s (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64) NOT NULL, n INT NOT NULL, KEY (v)) ENGINE=InnoDB`,
	} {
		if _, err := winner.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := mysql.ParseDSN(g.Prefix[1])
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = "scripts"
	cfg.MultiStatements = true
	victim, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()

	cases := []struct {
		name  string
		guard bool
		// gtid: the script raises 1213 after its COMMIT when its
		// transaction wrote nothing (only with guard).
		gtid bool
		// sleep is where the script sleeps while node 1 commits the key:
		// "mid" after the key's insert, "end" just before COMMIT, "" nowhere
		// (node 1 commits after a random delay).
		sleep       string
		tries, rows int
		// want: "half", the case must show half-written tries (the
		// failure the guards exist for); "lost", tries the script
		// reported committed that wrote nothing (the failure the GTID
		// check exists for); "", neither.
		want string
	}{
		{name: "unguarded abort mid-script", sleep: "mid", tries: 5, rows: 5, want: "half"},
		{name: "unguarded random", tries: 100, rows: 300, want: "half"},
		{name: "guards without GTID check, abort before COMMIT", guard: true, sleep: "end", tries: 5, rows: 5, want: "lost"},
		{name: "guarded abort mid-script", guard: true, gtid: true, sleep: "mid", tries: 10, rows: 5},
		{name: "guarded abort before COMMIT", guard: true, gtid: true, sleep: "end", tries: 10, rows: 5},
		{name: "guarded random", guard: true, gtid: true, tries: 300, rows: 300},
	}
	for ci, c := range cases {
		var ok, guardErr, deadlock, gtidErr, dup, half, halfOK, lost int
		for i := range c.tries {
			k := fmt.Sprintf("c%d-%d", ci, i)
			script := abortScript(k, c.guard, c.gtid, c.sleep, c.rows)
			conn, err := victim.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- runAbortScript(ctx, conn, script) }()
			if c.sleep != "" {
				time.Sleep(100 * time.Millisecond)
			} else {
				time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond)
			}
			_, werr := winner.ExecContext(ctx, `INSERT INTO r (u, who) VALUES (?, 'winner')`, k)
			verr := <-done
			// The connection's transaction state is unknown after an
			// error: it goes.
			conn.Raw(func(any) error { return nil })
			if verr != nil {
				conn.Raw(func(any) error { return errBadConn })
			}
			conn.Close()
			if werr != nil && mysqlErrno(werr) != 1062 && mysqlErrno(werr) != 1213 {
				t.Fatalf("%s try %d: node 1's insert: %v", c.name, i, werr)
			}
			var who string
			var ns int
			if err := check.QueryRowContext(ctx, `SELECT who FROM r WHERE u = ?`, k).Scan(&who); err != nil {
				t.Fatalf("%s try %d: read r: %v", c.name, i, err)
			}
			if err := check.QueryRowContext(ctx, `SELECT COUNT(*) FROM s WHERE v = ?`, k).Scan(&ns); err != nil {
				t.Fatal(err)
			}
			switch n := mysqlErrno(verr); {
			case verr == nil:
				ok++
			case n == 1242:
				guardErr++
			case n == 1213 && strings.Contains(verr.Error(), abortMessage):
				gtidErr++
			case n == 1213:
				deadlock++
			case n == 1062:
				dup++ // node 1's key was applied on node 2 before the script's insert
			default:
				t.Fatalf("%s try %d: script: %v", c.name, i, verr)
			}
			switch {
			case who != "victim" && ns != 0:
				half++
				if verr == nil {
					halfOK++
				}
				if c.want != "half" {
					t.Errorf("%s try %d: %d rows of s committed without the script's key (node 1's), script error %v", c.name, i, ns, verr)
				}
			case verr == nil && (who != "victim" || ns != c.rows):
				lost++
				// Unguarded, an abort in the last gap loses the whole
				// script the same way: a failure the case expects too.
				if c.want == "" {
					t.Errorf("%s try %d: the script succeeded but r's key is %s's and s has %d of %d rows", c.name, i, who, ns, c.rows)
				}
			case who == "victim" && ns != c.rows:
				t.Errorf("%s try %d: the script's key with %d of %d rows of s", c.name, i, ns, c.rows)
			}
		}
		t.Logf("%s: %d tries: %d ended without error (%d of them half-written, %d wrote nothing), %d deadlock in a statement (1213), %d stopped by the GTID check, %d other 1242, %d duplicate key (node 1's key applied first)",
			c.name, c.tries, ok, halfOK, lost, deadlock, gtidErr, guardErr, dup)
		switch {
		case c.want == "half" && half == 0:
			t.Errorf("%s: no try half-written: the server no longer goes on after a brute-force abort inside a script, or no abort was provoked", c.name)
		case c.want == "lost" && lost == 0:
			t.Errorf("%s: no try reported committed without its writes: a COMMIT after a brute-force abort now fails, or no abort was provoked", c.name)
		case c.want == "" && deadlock+gtidErr == 0:
			t.Errorf("%s: no abort provoked, the case proves nothing", c.name)
		}
	}
}

var errBadConn = errors.New("bad connection")

// abortMessage is the text of the error the GTID check raises.
const abortMessage = "transaction rolled back by a brute-force abort"

// abortScript is the script one try sends: key k in r, then rows rows
// of s, in one transaction, with a marker SELECT after COMMIT. Guarded,
// every write runs only inside the transaction; with gtid, a transaction
// that committed nothing raises 1213 after its COMMIT.
func abortScript(k string, guard, gtid bool, sleep string, rows int) string {
	var b strings.Builder
	if gtid {
		b.WriteString("SET @rpctl_gtid = WSREP_LAST_WRITTEN_GTID();\n")
	}
	b.WriteString("START TRANSACTION;\n")
	if guard {
		fmt.Fprintf(&b, "INSERT INTO r (u, who) SELECT '%s', 'victim' FROM DUAL WHERE @@in_transaction = 1;\n", k)
	} else {
		fmt.Fprintf(&b, "INSERT INTO r (u, who) VALUES ('%s', 'victim');\n", k)
	}
	if sleep == "mid" {
		b.WriteString("DO SLEEP(0.5);\n")
	}
	for j := range rows {
		if guard {
			fmt.Fprintf(&b, "INSERT INTO s (v, n) SELECT '%s', %d FROM DUAL WHERE @@in_transaction = 1;\n", k, j)
		} else {
			fmt.Fprintf(&b, "INSERT INTO s (v, n) VALUES ('%s', %d);\n", k, j)
		}
	}
	if sleep == "end" {
		b.WriteString("DO SLEEP(0.5);\n")
	}
	b.WriteString("COMMIT;\n")
	if gtid {
		b.WriteString("BEGIN NOT ATOMIC IF WSREP_LAST_WRITTEN_GTID() <=> @rpctl_gtid THEN " +
			"SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = '" + abortMessage + "'; END IF; END;\n")
	}
	b.WriteString("SELECT 1")
	return b.String()
}

// runAbortScript sends script and reads its marker.
func runAbortScript(ctx context.Context, conn *sql.Conn, script string) error {
	rows, err := conn.QueryContext(ctx, script)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for {
		for rows.Next() {
			n++
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d markers", n)
	}
	return nil
}

func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

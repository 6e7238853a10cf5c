package storage_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// A statement run outside a transaction that meets a lock wait timeout
// (1205, what a Galera node's wsrep_sync_wait answers when its causality
// wait runs out) is tried again, as a transaction is. The row is held by
// another session until rpctl's first try has timed out; the second try
// finds it free. Without the retry every case below ends in error 1205.
func TestReadsOutsideTransactionsRetried(t *testing.T) {
	m := testdb.NewMySQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // hang guard only
	defer cancel()
	raw, err := sql.Open("mysql", m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, "INSERT INTO t VALUES (1, 10)"); err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["innodb_lock_wait_timeout"] = "1"
	tg, err := dsn.Parse(cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, tg, storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const locking = "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE"
	cases := []struct {
		name string
		run  func() error
	}{
		{"GetContext", func() error { var v int; return db.GetContext(ctx, &v, locking) }},
		{"SelectContext", func() error {
			vs := []int{7}
			if err := db.SelectContext(ctx, &vs, locking); err != nil {
				return err
			}
			if len(vs) != 1 {
				t.Errorf("SelectContext left %v, want the one row's value", vs)
			}
			return nil
		}},
		{"QueryContext", func() error {
			rows, err := db.QueryContext(ctx, locking)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
			}
			return rows.Err()
		}},
		{"QueryxContext", func() error {
			rows, err := db.QueryxContext(ctx, locking)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
			}
			return rows.Err()
		}},
		{"ExecContext", func() error { _, err := db.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = 1"); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			holder, err := raw.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Rollback()
			if _, err := holder.ExecContext(ctx, "SELECT v FROM t WHERE id = 1 FOR UPDATE"); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.run() }()
			// Progress, not time: the first try is seen waiting for the
			// lock, then seen no longer waiting (it got 1205) while the row
			// is still held; only then is the row let go.
			waitLockWaits(ctx, t, raw, m.Name, func(n int) bool { return n > 0 }, done)
			waitLockWaits(ctx, t, raw, m.Name, func(n int) bool { return n == 0 }, done)
			if err := holder.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("%s after a lock wait timeout: %v (want it retried)", tc.name, err)
			}
		})
	}
	var v int
	if err := raw.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 11 {
		t.Errorf("v = %d, %v; want 11: the retried UPDATE applied once", v, err)
	}
}

// waitLockWaits polls until cond holds for the number of sessions of
// database name running the test's statements on row 1 (the process list
// shows a statement while it runs, lock wait included, and a session
// sleeping between tries as Sleep; innodb_trx is no help: MariaDB 10.11
// goes on listing a timed-out autocommit statement's transaction as LOCK
// WAIT while its session sleeps). The holder's statement is over before
// the first poll, and the poll leaves out its own session. done ending
// first is a failure: the statement gave up (or succeeded) while the row
// was still held.
func waitLockWaits(ctx context.Context, t *testing.T, raw *sql.DB, name string, cond func(int) bool, done chan error) {
	t.Helper()
	for {
		var n int
		err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.processlist
			WHERE db = ? AND command = 'Query' AND id <> CONNECTION_ID() AND info LIKE '% t %id = 1%'`, name).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if cond(n) {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the statement ended while the row was still held: %v", err)
		case <-ctx.Done():
			t.Fatal("hang guard: no progress")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

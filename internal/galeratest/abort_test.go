package galeratest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/testdb"
)

// TestGaleraAbortsNeverSilent: a write transaction of rpctl's on node 2 that
// node 1's commit of the same key brute-force aborts must end in error 1213
// (which rpctl retries), never go on outside the transaction. Each try
// inserts a key in a transaction on node 2, commits the same key through
// node 1, and reads the key back in the transaction at once, with an
// argument as rpctl's statements have them. Through server-side prepared
// statements the read now and then returned node 1's row (or none) with no
// error, the transaction silently gone (a few tries in a hundred on
// MariaDB 10.11); rpctl's Galera sessions write arguments into the text.
func TestGaleraAbortsNeverSilent(t *testing.T) {
	const tries = 80
	g := testdb.NewGalera(t)
	urls := g.NewDatabase(t, "aborts")
	ctx := context.Background()
	victim, winner := openNode(t, urls, 1), openNode(t, urls, 0)
	if _, err := winner.ExecContext(ctx, `CREATE TABLE r (id INT AUTO_INCREMENT PRIMARY KEY, u VARCHAR(64) NOT NULL UNIQUE) ENGINE=InnoDB`); err != nil {
		t.Fatal(err)
	}
	deadlock := func(err error) bool {
		var me *mysql.MySQLError
		return errors.As(err, &me) && me.Number == 1213
	}
	aborted, silent := 0, 0
	for i := range tries {
		u := fmt.Sprintf("key-%d", i)
		tx, err := victim.BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var mine, read int64
		err = func() error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO r (u) VALUES (?)`, u); err != nil {
				return err
			}
			if err := tx.GetContext(ctx, &mine, `SELECT id FROM r WHERE u = ?`, u); err != nil {
				return err
			}
			if _, err := winner.ExecContext(ctx, `INSERT INTO r (u) VALUES (?)`, u); err != nil {
				t.Fatalf("try %d: node 1's insert: %v", i, err)
			}
			rows, err := tx.QueryContext(ctx, `SELECT id FROM r WHERE u = ?`, u)
			if err != nil {
				return err
			}
			found := false
			for rows.Next() {
				if err := rows.Scan(&read); err != nil {
					rows.Close()
					return err
				}
				found = true
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if !found || read != mine {
				silent++
				t.Errorf("try %d: the transaction's read found row %d (found %v), its own insert was row %d, with no error", i, read, found, mine)
			}
			return tx.Commit()
		}()
		tx.Rollback()
		switch {
		case deadlock(err):
			aborted++
		case err != nil:
			t.Fatalf("try %d: %v", i, err)
		}
	}
	t.Logf("%d tries: %d aborted with error 1213, %d silently", tries, aborted, silent)
	if aborted+silent != tries {
		t.Errorf("%d of %d tries committed the key node 1 had committed first", tries-aborted-silent, tries)
	}
}

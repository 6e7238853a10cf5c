package storage_test

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// TestOpenSessionCharset: a URL's charset gives the session what `SET
// NAMES charset` gives it, whether the driver sends the charset in the
// handshake (the utf8 family: no SET statement) or as SET NAMES (others).
func TestOpenSessionCharset(t *testing.T) {
	ctx := context.Background()
	my := testdb.NewMySQL(t)
	const vars = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection"
	for _, tc := range []struct {
		charset string
		sets    int // SET statements the connection ran
	}{
		{"utf8", 0}, {"utf8mb3", 0}, {"UTF8MB4", 0}, {"latin1", 1},
	} {
		t.Run(tc.charset, func(t *testing.T) {
			// What SET NAMES gives, on a session started with another
			// charset.
			ref, err := my.Admin.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			if _, err := ref.ExecContext(ctx, "SET NAMES cp1251"); err != nil {
				t.Fatal(err)
			}
			if _, err := ref.ExecContext(ctx, "SET NAMES "+tc.charset); err != nil {
				t.Fatal(err)
			}
			var want [4]string
			if err := ref.QueryRowContext(ctx, vars).Scan(&want[0], &want[1], &want[2], &want[3]); err != nil {
				t.Fatal(err)
			}

			db := testdb.Open(t, my.URL[:len(my.URL)-len("utf8")]+tc.charset, storage.RolePlacement)
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var got [4]string
			if err := conn.QueryRowContext(ctx, vars).Scan(&got[0], &got[1], &got[2], &got[3]); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("session %v, want %v (SET NAMES %s)", got, want, tc.charset)
			}
			var name string
			var sets int
			if err := conn.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Com_set_option'").Scan(&name, &sets); err != nil {
				t.Fatal(err)
			}
			if sets != tc.sets {
				t.Errorf("%d SET statements on the session, want %d", sets, tc.sets)
			}
		})
	}
}

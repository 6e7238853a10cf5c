// Package cmdtest is the command packages' test support: it runs the whole
// command tree as main does (Rpctl, RpctlB), and holds the fixtures (clouds,
// Nova's own nova-manage, reference sides) that tests of several command
// groups use. Only tests import it (internal/archtest checks it).
package cmdtest

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

func RpctlB(b *testing.B, args ...string) {
	b.Helper()
	ios, _, out, errOut := iostreams.Test()
	if code := cmd.Run(context.Background(), ios, "bench", args); code != 0 {
		b.Fatalf("rpctl %v: exit %d\n%s%s", args, code, out, errOut)
	}
}

// CloneDB copies every table of src into dst (same server).
func CloneDB(t testing.TB, src, dst *testdb.MySQL) {
	t.Helper()
	rows, err := src.Admin.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE'", src.Name)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	conn, err := src.Admin.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Placement's standard resource classes start at id 0 (VCPU).
	for _, q := range []string{"SET foreign_key_checks = 0", "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range tables {
		for _, q := range []string{
			fmt.Sprintf("CREATE TABLE `%s`.`%s` LIKE `%s`.`%s`", dst.Name, tb, src.Name, tb),
			fmt.Sprintf("INSERT INTO `%s`.`%s` SELECT * FROM `%s`.`%s`", dst.Name, tb, src.Name, tb),
		} {
			if _, err := conn.ExecContext(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// OpenDB opens a test database as rpctl's storage does (cell "cell1").
func OpenDB(t testing.TB, m *testdb.MySQL, role storage.Role) *storage.DB {
	t.Helper()
	tg, err := dsn.Parse(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(context.Background(), tg, role, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Rpctl runs the command tree as main does and returns stdout, stderr and
// the exit code.
func Rpctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	code := cmd.Run(context.Background(), ios, "test", args)
	return out.String(), errOut.String(), code
}

// BuildRpctl builds the command, for tests that signal it as a process.
func BuildRpctl(t testing.TB) string { return testdb.BuildRpctl(t) }

// MustRun runs the built command bin and returns its output (stdout and
// stderr), failing t when it exits non-zero.
func MustRun(t testing.TB, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("rpctl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// ratiosLegacyRows are compute nodes in every state migrate_empty_ratio
// cares about: 0.0, NULL, mixed, already set (including values that are not
// exact in MySQL's single-precision FLOAT), negative, and soft-deleted.
func ratiosLegacyRows() []nova.ComputeNode {
	f := cmdtest.RatiosFP
	created := time.Date(2019, 3, 1, 10, 0, 0, 0, time.UTC)
	var out []nova.ComputeNode
	for id := int64(1); id <= 120; id++ {
		var n nova.ComputeNode
		switch id % 10 {
		case 0:
			n = cmdtest.RatiosNode(id, f(0), f(0), f(0))
		case 1:
			n = cmdtest.RatiosNode(id, nil, nil, nil)
		case 2:
			n = cmdtest.RatiosNode(id, nil, f(1.1), f(0))
		case 3:
			n = cmdtest.RatiosNode(id, f(16), f(1.5), f(1))
		case 4:
			n = cmdtest.RatiosNode(id, f(4), f(0), nil)
		case 5:
			n = cmdtest.RatiosNode(id, f(-1), nil, f(0.7))
		case 6:
			n = cmdtest.RatiosNode(id, f(0), f(1.2), f(1))
		case 7:
			n = cmdtest.RatiosNode(id, f(0), nil, f(0))
			n.Deleted = id
			n.DeletedAt = &created
		case 8:
			n = cmdtest.RatiosNode(id, f(3.3), f(1.25), f(0.9))
		case 9:
			n = cmdtest.RatiosNode(id, nil, f(0), f(2.2))
		}
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", id)
		n.UUID, n.CreatedAt = &u, &created
		out = append(out, n)
	}
	return out
}

// ratiosTableDump is every compute_nodes column of every row as MySQL
// prints it, plus the ratios' exact single-precision values widened to
// DOUBLE; updated_at only as "was it set", since each tool stamps its own
// clock.
func ratiosTableDump(t *testing.T, dsnStr string) (rows []string, updated map[string]time.Time) {
	t.Helper()
	db, err := sql.Open("mysql", dsnStr)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cols []string
	crows, err := db.Query(`SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'compute_nodes' ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for crows.Next() {
		var c string
		crows.Scan(&c)
		if c != "updated_at" {
			cols = append(cols, "`"+c+"`")
		}
	}
	crows.Close()
	exprs := append(cols, "CAST(cpu_allocation_ratio AS DOUBLE)", "CAST(ram_allocation_ratio AS DOUBLE)", "CAST(disk_allocation_ratio AS DOUBLE)", "updated_at")
	r, err := db.Query("SELECT " + strings.Join(exprs, ", ") + " FROM compute_nodes ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	updated = map[string]time.Time{}
	for r.Next() {
		vals := make([]sql.NullString, len(exprs))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := r.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for i, v := range vals[:len(vals)-1] {
			s := "NULL"
			if v.Valid {
				s = v.String
			}
			parts = append(parts, strings.Trim(exprs[i], "`")+"="+s)
		}
		row := strings.Join(parts, " ")
		if up := vals[len(vals)-1]; up.Valid {
			ts, err := time.Parse(time.RFC3339, up.String) // parseTime=true
			if err != nil {
				ts, err = time.Parse(time.DateTime, up.String)
			}
			if err != nil {
				t.Fatalf("updated_at %q: %v", up.String, err)
			}
			updated[vals[0].String] = ts
			row += " updated_at=set"
		} else {
			row += " updated_at=NULL"
		}
		rows = append(rows, row)
	}
	return rows, updated
}

var ratiosSummaryRE = regexp.MustCompile(`\|\s*migrate_empty_ratio\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|`)

func ratiosSummaryRow(out string) string {
	m := ratiosSummaryRE.FindStringSubmatch(out)
	if m == nil {
		return "<no migrate_empty_ratio row>"
	}
	return m[1] + "/" + m[2]
}

// TestMigrateRatiosParityWithNova runs Nova 26's own
// `nova-manage db online_data_migrations` on one cell database and
// `rpctl migrate ratios` on another holding the same rows, with the same
// nova.conf, and requires identical compute_nodes tables, exit codes and
// migrate_empty_ratio totals.
func TestMigrateRatiosParityWithNova(t *testing.T) {
	testdb.RequirePython(t, "nova.cmd.manage", "pymysql")
	novaCell, novaAPI, novaPlacement := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	rpctlCell := testdb.NewMySQL(t)
	prefix := novaCell.URL[:strings.LastIndex(novaCell.URL, "/")]
	script := filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh")
	if out, err := exec.Command(script, prefix, novaCell.Name, novaAPI.Name, novaPlacement.Name).CombinedOutput(); err != nil {
		t.Fatalf("reference db sync: %v\n%s", err, out)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--cell-db", rpctlCell.URL, "init"); code != 0 {
		t.Fatalf("rpctl init: %s", errOut)
	}
	ctx := context.Background()
	open := func(m *testdb.MySQL) *storage.DB {
		tg, err := dsn.Parse(m.DSN)
		if err != nil {
			t.Fatal(err)
		}
		db, err := storage.Open(ctx, tg, storage.RoleCell, m.Name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	novaDB, rpctlDB := open(novaCell), open(rpctlCell)

	dir := t.TempDir()
	writeConf := func(name, defaults string) string {
		p := filepath.Join(dir, name)
		body := fmt.Sprintf("[DEFAULT]\ntransport_url = fake://\n%s\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n",
			defaults, novaCell.URL, novaAPI.URL)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const overrides = "cpu_allocation_ratio = 2.5\nram_allocation_ratio = 1.3\ndisk_allocation_ratio = 1.7\ninitial_cpu_allocation_ratio = 8.0\n"
	cases := []struct {
		name      string
		defaults  string   // nova.conf [DEFAULT] both tools read
		rpctlConf string   // when rpctl reads a different [DEFAULT]
		flags     []string // extra rpctl flags
		maxCount  string
	}{
		{name: "nothing set"},
		{name: "only initial values", defaults: "initial_cpu_allocation_ratio = 4.0\ninitial_ram_allocation_ratio = 1.1\ninitial_disk_allocation_ratio = 0.7\n"},
		{name: "overrides", defaults: overrides},
		{name: "override 0.0", defaults: "cpu_allocation_ratio = 0.0\nram_allocation_ratio = 0\ndisk_allocation_ratio = 1.05\ninitial_ram_allocation_ratio = 1.25\n"},
		{name: "overrides as rpctl flags", defaults: overrides, rpctlConf: "",
			flags: []string{"--cpu-allocation-ratio", "2.5", "--ram-allocation-ratio=1.3", "--disk-allocation-ratio", "1.7", "--initial-cpu-allocation-ratio", "8"}},
		{name: "max-count 25", maxCount: "25"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, db := range []*storage.DB{novaDB, rpctlDB} {
				if err := celldb.InsertCellRows(ctx, db, nova.CellRows{ComputeNodes: ratiosLegacyRows(), Replace: true}); err != nil {
					t.Fatal(err)
				}
			}
			novaConf := writeConf(fmt.Sprintf("nova%d.conf", i), tc.defaults)
			rpctlConf := novaConf
			if tc.flags != nil {
				rpctlConf = writeConf(fmt.Sprintf("rpctl%d.conf", i), tc.rpctlConf)
			}

			novaArgs := []string{"nova-manage", "--config-file", novaConf, "db", "online_data_migrations"}
			rpctlArgs := append([]string{"--config-file", rpctlConf, "--cell-db", rpctlCell.URL, "migrate", "ratios"}, tc.flags...)
			if tc.maxCount != "" {
				novaArgs = append(novaArgs, "--max-count", tc.maxCount)
				rpctlArgs = append(rpctlArgs, "--max-count", tc.maxCount)
			}
			py := fmt.Sprintf("import sys; from nova.cmd import manage; sys.argv=%s; sys.exit(manage.main())", cmdtest.PyList(novaArgs))
			novaOut, err := exec.Command(testdb.Python, "-c", py).CombinedOutput()
			novaCode := 0
			if err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				novaCode = ee.ExitCode()
			}
			rpctlOut, rpctlErr, rpctlCode := cmdtest.Rpctl(t, rpctlArgs...)

			if novaCode != rpctlCode {
				t.Errorf("exit code: nova-manage %d, rpctl %d", novaCode, rpctlCode)
			}
			if n, r := ratiosSummaryRow(string(novaOut)), ratiosSummaryRow(rpctlOut); n != r {
				t.Errorf("migrate_empty_ratio Total Needed/Completed: nova-manage %s, rpctl %s", n, r)
			}
			want, novaUpdated := ratiosTableDump(t, novaCell.DSN)
			got, rpctlUpdated := ratiosTableDump(t, rpctlCell.DSN)
			if len(want) != len(got) {
				t.Fatalf("row counts differ: nova %d, rpctl %d", len(want), len(got))
			}
			for j := range want {
				if want[j] != got[j] {
					t.Errorf("row differs:\n nova:  %s\n rpctl: %s", want[j], got[j])
				}
			}
			for id, nt := range novaUpdated {
				if d := rpctlUpdated[id].Sub(nt); d > time.Minute || d < -time.Minute {
					t.Errorf("node %s: updated_at nova %v, rpctl %v: not the same UTC clock", id, nt, rpctlUpdated[id])
				}
			}
			if t.Failed() {
				t.Logf("nova-manage (exit %d):\n%s\nrpctl (exit %d):\n%s%s", novaCode, novaOut, rpctlCode, rpctlOut, rpctlErr)
			}
		})
	}
}

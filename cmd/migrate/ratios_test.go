package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// ratiosEmbedded creates an embedded database with a few compute nodes that
// need fixing and returns its path.
func ratiosEmbedded(t *testing.T, initArgs ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cloud.db")
	if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", path, "init"}, initArgs...)...); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	db, err := storage.Open(context.Background(), dsn.SQLiteFile(path), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	nodes := []nova.ComputeNode{
		cmdtest.RatiosNode(1, cmdtest.RatiosFP(0), nil, cmdtest.RatiosFP(1)),
		cmdtest.RatiosNode(2, cmdtest.RatiosFP(4), cmdtest.RatiosFP(1), nil),
		cmdtest.RatiosNode(3, cmdtest.RatiosFP(4), cmdtest.RatiosFP(1), cmdtest.RatiosFP(1)),
	}
	if err := celldb.InsertComputeNodes(context.Background(), db, nodes); err != nil {
		t.Fatal(err)
	}
	return path
}

func ratiosDump(t *testing.T, path string) string {
	t.Helper()
	db, err := storage.Open(context.Background(), dsn.SQLiteFile(path), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	nodes, err := celldb.ListComputeNodes(context.Background(), db, true)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	f := func(v *float64) string {
		if v == nil {
			return "NULL"
		}
		return fmt.Sprint(*v)
	}
	for _, n := range nodes {
		fmt.Fprintf(&b, "%d %s %s %s %v\n", n.ID, f(n.CPUAllocationRatio), f(n.RAMAllocationRatio), f(n.DiskAllocationRatio), n.UpdatedAt != nil)
	}
	return b.String()
}

func TestMigrateRatiosBadInput(t *testing.T) {
	path := ratiosEmbedded(t)
	before := ratiosDump(t, path)
	conf := func(body string) string {
		p := filepath.Join(t.TempDir(), "nova.conf")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Flags are parsed by internal/flagnum (127, bad input); nova.conf's
	// values are configuration errors (255).
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"non-numeric flag", []string{"migrate", "ratios", "--cpu-allocation-ratio", "lots"}, 127,
			`rpctl: --cpu-allocation-ratio "lots": not a decimal number`},
		{"negative initial flag", []string{"migrate", "ratios", "--initial-ram-allocation-ratio", "-1.5"}, 127,
			`rpctl: --initial-ram-allocation-ratio "-1.5": must not be negative`},
		{"negative flag through migrate all", []string{"migrate", "all", "--disk-allocation-ratio=-2"}, 127,
			`rpctl: --disk-allocation-ratio "-2": must not be negative`},
		{"flag checked on dry run too", []string{"migrate", "ratios", "--dry-run", "--initial-cpu-allocation-ratio", "NaN"}, 127,
			`rpctl: --initial-cpu-allocation-ratio "NaN": not a decimal number`},
		{"flag beyond a FLOAT, on dry run", []string{"migrate", "ratios", "--dry-run", "--initial-cpu-allocation-ratio", "1e39"}, 127,
			`rpctl: --initial-cpu-allocation-ratio "1e39": is greater than 3.40282e+38`},
		{"non-numeric config", []string{"--config-file", conf("[DEFAULT]\n# ratios\ncpu_allocation_ratio = sixteen\n"), "migrate", "ratios"}, 255,
			`: [DEFAULT] cpu_allocation_ratio: expected a number, got "sixteen"`},
		{"negative initial config", []string{"--config-file", conf("[DEFAULT]\ninitial_disk_allocation_ratio = -1\n"), "migrate", "ratios"}, 255,
			`: [DEFAULT] initial_disk_allocation_ratio: must be >= 0.0, got "-1"`},
		{"unknown release", []string{"migrate", "ratios", "--dry-run", "--release", "2025.2"}, 127,
			`rpctl: --release: rpctl knows the rules of zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1, not "2025.2"`},
		{"unknown release through migrate all", []string{"migrate", "all", "--release", "epoxy"}, 127,
			`rpctl: --release: rpctl knows the rules of zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1, not "epoxy"`},
		{"config beyond a FLOAT, on dry run", []string{"--config-file", conf("[DEFAULT]\ninitial_cpu_allocation_ratio = 1e39\n"), "migrate", "ratios", "--dry-run"}, 255,
			`initial_cpu_allocation_ratio = 1e+39 is greater than 3.40282e+38`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", path}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
				t.Errorf("code %d\nstdout %q\nstderr %q\nwant one line containing %q", code, out, errOut, tt.want)
			}
			if after := ratiosDump(t, path); after != before {
				t.Errorf("bad input wrote:\n%s\nwas:\n%s", after, before)
			}
		})
	}
}

func TestMigrateRatiosDryRunAndRun(t *testing.T) {
	path := ratiosEmbedded(t)
	before := ratiosDump(t, path)
	out, errOut, code := cmdtest.Rpctl(t, "--db", path, "migrate", "ratios", "--dry-run", "--ram-allocation-ratio", "1.25")
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errOut)
	}
	// Numbers are right-aligned, as osc's tables align them (issue 21).
	want := `+-------+----+---------------------+-----------------------+------+------+-------------------------------+
| cell  | id | hypervisor_hostname | ratio                 |  old |  new | option                        |
+-------+----+---------------------+-----------------------+------+------+-------------------------------+
| cell1 |  1 | compute001          | cpu_allocation_ratio  |  0.0 | 16.0 | initial_cpu_allocation_ratio  |
| cell1 |  1 | compute001          | ram_allocation_ratio  | NULL | 1.25 | ram_allocation_ratio          |
| cell1 |  2 | compute002          | disk_allocation_ratio | NULL |  1.0 | initial_disk_allocation_ratio |
+-------+----+---------------------+-----------------------+------+------+-------------------------------+
`
	if out != want {
		t.Errorf("dry run printed\n%s\nwant\n%s", out, want)
	}
	if ratiosDump(t, path) != before {
		t.Fatal("dry run wrote")
	}
	out, _, _ = cmdtest.Rpctl(t, "--db", path, "-f", "json", "migrate", "ratios", "--dry-run", "--max-count", "1")
	var changes []map[string]any
	if err := json.Unmarshal([]byte(out), &changes); err != nil || len(changes) != 2 || changes[0]["old"] != 0.0 || changes[1]["old"] != nil {
		t.Errorf("json dry run (max-count 1 row): %v %s", err, out)
	}

	out, errOut, code = cmdtest.Rpctl(t, "--db", path, "migrate", "ratios", "--ram-allocation-ratio", "1.25")
	if code != 0 || !strings.Contains(out, "| migrate_empty_ratio |      2       |     2     |") ||
		!strings.Contains(errOut, "2 rows matched query migrate_empty_ratio, 2 migrated") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	if got, want := ratiosDump(t, path), "1 16 1.25 1 true\n2 4 1 1 true\n3 4 1 1 false\n"; got != want {
		t.Errorf("after run:\n%s\nwant\n%s", got, want)
	}
	_, errOut, code = cmdtest.Rpctl(t, "--db", path, "migrate", "ratios", "--dry-run")
	if code != 0 || !strings.Contains(errOut, "nothing to change") {
		t.Errorf("dry run after: %d %s", code, errOut)
	}
}

// TestMigrateRatiosRelease: the initial ratios nova.conf leaves unset are
// --release's Nova's defaults (Zed 16.0/1.5/1.0, 2025.1 4.0/1.0/1.0:
// nova/conf/compute.py of Nova 26.2.2 and 31.0.0); one nova.conf sets
// wins in every release, and so does its flag.
func TestMigrateRatiosRelease(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nova.conf")
	if err := os.WriteFile(conf, []byte("[DEFAULT]\ninitial_disk_allocation_ratio = 2.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // the rows after the run
	}{
		{"default is zed", nil, "1 16 1.5 1 true\n2 4 1 1 true\n3 4 1 1 false\n"},
		{"zed", []string{"--release", "zed"}, "1 16 1.5 1 true\n2 4 1 1 true\n3 4 1 1 false\n"},
		{"2025.1", []string{"--release", "2025.1"}, "1 4 1 1 true\n2 4 1 1 true\n3 4 1 1 false\n"},
		{"any case", []string{"--release", "ZED"}, "1 16 1.5 1 true\n2 4 1 1 true\n3 4 1 1 false\n"},
		{"nova.conf wins", []string{"--config-file", conf, "--release", "2025.1"}, "1 4 1 1 true\n2 4 1 2 true\n3 4 1 1 false\n"},
		{"the flag wins", []string{"--release", "2025.1", "--initial-cpu-allocation-ratio", "3"}, "1 3 1 1 true\n2 4 1 1 true\n3 4 1 1 false\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ratiosEmbedded(t)
			var global, local []string
			for i := 0; i < len(tc.args); i += 2 {
				if tc.args[i] == "--config-file" {
					global = append(global, tc.args[i:i+2]...)
				} else {
					local = append(local, tc.args[i:i+2]...)
				}
			}
			args := append(append([]string{"--db", path}, global...), append([]string{"migrate", "ratios"}, local...)...)
			if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
				t.Fatalf("%v: exit %d\n%s", args, code, errOut)
			}
			if got := ratiosDump(t, path); got != tc.want {
				t.Errorf("%v:\n%s\nwant\n%s", args, got, tc.want)
			}
		})
	}
	// migrate all takes the same flag: its inventory step and its ratios
	// step both follow it (on 2025.1's schema, which its
	// populate_instance_compute_id needs).
	path := ratiosEmbedded(t, "--release", "2025.1")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", path, "migrate", "all", "--release", "2025.1"); code != 0 {
		t.Fatalf("migrate all --release 2025.1: %d\n%s", code, errOut)
	}
	if got, want := ratiosDump(t, path), "1 4 1 1 true\n2 4 1 1 true\n3 4 1 1 false\n"; got != want {
		t.Errorf("migrate all --release 2025.1:\n%s\nwant\n%s", got, want)
	}
	out, errOut, code := cmdtest.Rpctl(t, "--db", path, "-f", "json", "inventory", "list", "compute001")
	if code != 0 || !strings.Contains(out, `"allocation_ratio": 4.0`) {
		t.Errorf("compute001's inventory after migrate all --release 2025.1: %d\n%s\n%s", code, out, errOut)
	}
}

func TestMigrateRatiosUnknownCell(t *testing.T) {
	path := ratiosEmbedded(t)
	_, errOut, code := cmdtest.Rpctl(t, "--db", path, "migrate", "ratios", "--cell", "nope")
	if code != 255 || !strings.Contains(errOut, `--cell "nope": no such cell`) {
		t.Errorf("%d %s", code, errOut)
	}
}

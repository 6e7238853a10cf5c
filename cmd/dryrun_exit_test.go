package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestDryRunExitsAsTheRealRun: on the sample cloud, before and after the
// inventory migration, a dry run exits with the code the real run then
// exits with, names what it cannot write yet in one line instead of
// printing allocations with an empty provider uuid, and writes nothing.
// claims heal's dry run keeps nova-manage's 4, except when a compute node
// has no provider yet: then the real run's 3.
func TestDryRunExitsAsTheRealRun(t *testing.T) {
	dir := t.TempDir()
	sample := func(name string, extra ...string) string {
		path := filepath.Join(dir, name)
		args := append([]string{"--db", path, "sample-cloud", "--nodes", "60", "--seed", "2"}, extra...)
		if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
			t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
		}
		return path
	}
	copyOf := func(src, name string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	clean, bad := sample("clean.db"), sample("bad.db", "--bad-rows", "3")
	inventoried := copyOf(clean, "inventoried.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", inventoried, "migrate", "inventory"); code != 0 {
		t.Fatalf("migrate inventory: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		name    string
		db      string
		args    []string
		want    int
		stderr  []string // in the dry run's
		realRun bool     // the real run must exit want too
	}{
		{"migrate all, clean cloud", clean, []string{"migrate", "all"}, 0,
			[]string{"46 compute nodes have no uuid yet", "heal_allocations: 0 instances would be healed, and 75 more on hosts "}, true},
		{"migrate all, bad rows", bad, []string{"migrate", "all"}, 2,
			[]string{"would skip migrate_compute_node_inventory", "the real run would exit 2"}, true},
		{"migrate inventory, bad rows", bad, []string{"migrate", "inventory"}, 2, []string{"the real run would exit 2"}, true},
		{"migrate allocations before the inventory", clean, []string{"migrate", "allocations"}, 2,
			[]string{"would skip heal_allocations: 75 instances on hosts ", `run "rpctl migrate inventory" first`}, true},
		{"migrate allocations after the inventory", inventoried, []string{"migrate", "allocations"}, 0, []string{"heal_allocations: 75 instances would be healed"}, true},
		{"claims heal before the inventory", clean, []string{"claims", "heal"}, 3,
			[]string{"75 instances cannot be healed yet", `Run "rpctl migrate inventory" first`}, true},
		// nova-manage's dry run: 4 although the real run heals (0).
		{"claims heal after the inventory", inventoried, []string{"claims", "heal"}, 4, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := copyOf(tc.db, "run.db")
			before, _ := os.ReadFile(db)
			out, errOut, code := cmdtest.Rpctl(t, append(append([]string{"--db", db}, tc.args...), "--dry-run")...)
			if code != tc.want {
				t.Errorf("dry run: exit %d, want %d\n%s", code, tc.want, errOut)
			}
			if strings.Contains(out, `{"":`) || strings.Contains(out, `"allocations":{""`) {
				t.Errorf("dry run prints an allocation on an empty provider uuid:\n%s", out)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("dry run's stderr lacks %q:\n%s", s, errOut)
				}
			}
			if after, _ := os.ReadFile(db); string(after) != string(before) {
				t.Errorf("the dry run wrote to the database")
			}
			if !tc.realRun {
				return
			}
			if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, tc.args...)...); code != tc.want {
				t.Errorf("real run: exit %d, the dry run said %d\n%s", code, tc.want, errOut)
			}
		})
	}
}

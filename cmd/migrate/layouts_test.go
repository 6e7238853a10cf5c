package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
)

// Seed 31 has an instance whose disk is larger than its node's
// disk_available_least: with Nova's max_unit (local_gb) it heals, with the
// Newton spec's it is skipped.
func TestMigrateAllDiskMaxUnit(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"default is Nova's local_gb", nil, 0},
		{"available-least refuses the larger instance", []string{"--disk-max-unit", "available-least"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "rpctl.db")
			if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "31", "--nodes", "120"); code != 0 {
				t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
			}
			_, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db, "migrate", "all"}, tc.args...)...)
			if code != tc.want {
				t.Fatalf("migrate all: exit %d, want %d: %s", code, tc.want, errOut)
			}
			if code == 0 {
				return
			}
			// The skipped instance is not a bad row: it says what to do.
			for _, want := range []string{"heal_allocations: cell cell1: instance ", "DISK_GB does not fit", "without --disk-max-unit available-least", "1 instances were not healed"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if strings.Contains(errOut, "data is bad") {
				t.Errorf("a sound instance called bad data:\n%s", errOut)
			}
		})
	}
}

// Heal places instances where the layout put their resources: NUMA
// children, a sharing provider.
func TestMigrateAllHealsEveryLayout(t *testing.T) {
	for _, layout := range [][]string{{"--layout", "nested"}, {"--shared-storage", "ceph=*"}, {"--layout", "nested", "--shared-storage", "ceph=*"}} {
		t.Run(strings.Join(layout, " "), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "rpctl.db")
			if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "3", "--nodes", "30"); code != 0 {
				t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
			}
			if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db, "migrate", "all"}, layout...)...); code != 0 {
				t.Fatalf("migrate all: exit %d: %s", code, errOut)
			}
		})
	}
}

// layoutFlags are the four layouts rpctl writes.
var layoutFlags = map[string][]string{
	"flat":          nil,
	"nested":        {"--layout", "nested"},
	"flat+shared":   {"--shared-storage", "ceph=*"},
	"nested+shared": {"--layout", "nested", "--shared-storage", "ceph=*"},
}

// followAdvice runs status and, while it is not Success, the first command
// each non-successful check advises (rpctl migrate inventory with the
// cloud's layout flags), at most rounds times; it fails the test when
// status does not reach Success or a check gives no advice.
func followAdvice(t *testing.T, db string, layout []string, rounds int) {
	t.Helper()
	// The command a check tells the operator to run: quoted (Run "rpctl
	// migrate inventory") or after "run" (run rpctl migrate aggregates).
	adviceRe := regexp.MustCompile(`"(rpctl [a-z -]+)"|[Rr]un (rpctl [a-z]+(?: [a-z]+)*)`)
	for round := 0; ; round++ {
		out, errOut, code := cmdtest.Rpctl(t, "--db", db, "status", "--check", "rpctl", "--check", "placement-status", "--json")
		if code == 0 {
			return
		}
		if round == rounds {
			t.Fatalf("status still exits %d after %d rounds of advice:\n%s%s", code, rounds, out, errOut)
		}
		var doc cmdtest.StatusDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("status --json: %v: %s %s", err, out, errOut)
		}
		// Each check's first quoted command, in the order status prints
		// them; a check that names none may be waiting on another's
		// advice (no provider yet), so it fails the test only when no
		// check advised anything this round.
		followed := 0
		var silent []string
		for _, c := range doc.Checks {
			if c.Result == 0 {
				continue
			}
			m := adviceRe.FindStringSubmatch(deref(c.Details))
			if m == nil {
				silent = append(silent, fmt.Sprintf("%q (result %d): %s", c.Check, c.Result, deref(c.Details)))
				continue
			}
			if m[1] == "" {
				m[1] = m[2]
			}
			args := append([]string{"--db", db}, strings.Fields(m[1])[1:]...)
			if strings.HasPrefix(m[1], "rpctl migrate inventory") || strings.HasPrefix(m[1], "rpctl migrate all") {
				args = append(args, layout...)
			}
			_, errOut, code := cmdtest.Rpctl(t, args...)
			t.Logf("%s: followed %q: exit %d", c.Check, m[1], code)
			if code != 0 {
				t.Fatalf("%s: advice %v exits %d: %s", c.Check, args, code, errOut)
			}
			followed++
		}
		if followed == 0 {
			t.Fatalf("status exits %d and no check advises a command to run: %s", code, strings.Join(silent, "; "))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Every piece of advice status prints leads to Success, on every layout:
// on a cloud not yet migrated, and on one whose tree was written twice
// (the other layout over it, as a running nova-compute does to a nested
// tree).
func TestStatusAdviceLeadsToSuccess(t *testing.T) {
	wrong := map[string][]string{
		"flat":          {"--layout", "nested"},
		"nested":        nil,
		"flat+shared":   nil,
		"nested+shared": {"--layout", "nested"},
	}
	for name, layout := range layoutFlags {
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "rpctl.db")
			if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "5", "--nodes", "20"); code != 0 {
				t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
			}
			followAdvice(t, db, layout, 4)
			// The other layout written over it: refused, or a Failure
			// whose advice undoes it.
			_, _, code := cmdtest.Rpctl(t, append([]string{"--db", db, "migrate", "inventory"}, wrong[name]...)...)
			t.Logf("other layout over %s: exit %d", name, code)
			followAdvice(t, db, layout, 4)
		})
	}
}

// A cell whose nova-compute services reported seconds ago runs them.
func TestMigrateInventoryNestedWarnsOfRunningComputes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "3", "--nodes", "5"); code != 0 {
		t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
	}
	// sample-cloud's clock stopped in 2023: nothing runs.
	if _, errOut, _ := cmdtest.Rpctl(t, "--db", db, "migrate", "inventory", "--layout", "nested"); strings.Contains(errOut, "warning: --layout nested") {
		t.Errorf("services down, still a warning:\n%s", errOut)
	}
	ctx := context.Background()
	cell, err := storage.Open(ctx, dsn.SQLiteFile(db), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	defer cell.Close()
	if _, err := cell.ExecContext(ctx, `UPDATE services SET updated_at = ? WHERE `+"`binary`"+` = 'nova-compute'`, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	_, errOut, _ := cmdtest.Rpctl(t, "--db", db, "migrate", "inventory", "--layout", "nested")
	if !strings.Contains(errOut, "warning: --layout nested on a cloud whose nova-compute services run (") || !strings.Contains(errOut, "Only the flat layout survives") {
		t.Errorf("no warning:\n%s", errOut)
	}
	if _, errOut, _ := cmdtest.Rpctl(t, "--db", db, "migrate", "inventory"); strings.Contains(errOut, "warning: --layout nested") {
		t.Errorf("flat warns:\n%s", errOut)
	}
}

// cloudState is what a layout switch must keep: every consumer's summed
// allocation per class, and the cloud's totals per class (VCPU and PCPU
// together: nested splits the CPUs between them).
type cloudState struct {
	allocs map[string]int64 // consumer/class -> used
	totals map[string]int64
	// doubled counts providers holding DISK_GB that share an aggregate
	// with a sharing provider of DISK_GB.
	doubled int
}

func readCloudState(t *testing.T, db string) cloudState {
	t.Helper()
	ctx := context.Background()
	p, err := storage.Open(ctx, dsn.SQLiteFile(db), storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	st := cloudState{allocs: map[string]int64{}, totals: map[string]int64{}}
	var rows []struct {
		Key  string `db:"k"`
		Used int64  `db:"n"`
	}
	if err := p.SelectContext(ctx, &rows, `SELECT a.consumer_id || '/' || rc.name AS k, SUM(a.used) AS n FROM allocations a JOIN resource_classes rc ON rc.id = a.resource_class_id GROUP BY a.consumer_id, rc.name`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		st.allocs[r.Key] = r.Used
	}
	rows = nil
	if err := p.SelectContext(ctx, &rows, `SELECT CASE rc.name WHEN 'PCPU' THEN 'VCPU' ELSE rc.name END AS k, SUM(i.total) AS n FROM inventories i JOIN resource_classes rc ON rc.id = i.resource_class_id GROUP BY k`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		st.totals[r.Key] = r.Used
	}
	if err := p.GetContext(ctx, &st.doubled, `SELECT COUNT(*) FROM resource_providers rp
		JOIN inventories i ON i.resource_provider_id = rp.id JOIN resource_classes rc ON rc.id = i.resource_class_id AND rc.name = 'DISK_GB'
		JOIN resource_provider_aggregates rpa ON rpa.resource_provider_id = rp.id
		JOIN resource_provider_aggregates s ON s.aggregate_id = rpa.aggregate_id AND s.resource_provider_id <> rp.id
		JOIN inventories si ON si.resource_provider_id = s.resource_provider_id AND si.resource_class_id = rc.id
		JOIN resource_provider_traits st ON st.resource_provider_id = s.resource_provider_id
		JOIN traits tr ON tr.id = st.trait_id AND tr.name = 'MISC_SHARES_VIA_AGGREGATE'`); err != nil {
		t.Fatal(err)
	}
	return st
}

// Switching layouts on a migrated cloud moves inventories and the
// allocations on them: every allocation is kept, the totals are those of
// a cloud migrated with the new layout from the start (DISK_GB once), the
// re-run writes nothing and status is Success after every step.
func TestMigrateLayoutSwitch(t *testing.T) {
	steps := []string{"flat", "nested", "flat+shared", "nested", "nested+shared", "flat"}
	fresh := map[string]cloudState{}
	for _, name := range steps {
		if _, ok := fresh[name]; ok {
			continue
		}
		db := filepath.Join(t.TempDir(), "fresh.db")
		cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "3", "--nodes", "20")
		if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db, "migrate", "all"}, layoutFlags[name]...)...); code != 0 {
			t.Fatalf("fresh %s: exit %d: %s", name, code, errOut)
		}
		fresh[name] = readCloudState(t, db)
	}
	db := filepath.Join(t.TempDir(), "rpctl.db")
	cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "3", "--nodes", "20")
	var first cloudState
	for i, name := range steps {
		c := matrixCloud{args: []string{"--db", db}}
		if i == 0 {
			c.migrateAll(t, layoutFlags[name])
		} else {
			// The switch shows its own progress and time (issue 35).
			_, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db, "migrate", "all"}, layoutFlags[name]...)...)
			if code != 0 {
				t.Fatalf("step %d (%s): exit %d:\n%s", i, name, code, errOut)
			}
			lines := regexp.MustCompile(`(?m)^layout switch: (\d+)/(\d+) nodes, \d+ nodes/s, ETA \S+$`).FindAllStringSubmatch(errOut, -1)
			if len(lines) == 0 || lines[len(lines)-1][1] != lines[len(lines)-1][2] || lines[len(lines)-1][1] == "0" {
				t.Errorf("step %d (%s): no layout switch progress ending at its total:\n%s", i, name, errOut)
			} else if n := lines[len(lines)-1][1]; !strings.Contains(errOut, "(layout switch of "+n+" nodes ") {
				t.Errorf("step %d (%s): the time line does not show the layout switch of %s nodes:\n%s", i, name, n, errOut)
			}
		}
		if n := c.migrateAll(t, layoutFlags[name]); n != 0 {
			t.Errorf("step %d (%s): the re-run wrote %d rows", i, name, n)
		}
		st := readCloudState(t, db)
		if i == 0 {
			first = st
		} else if !maps.Equal(st.allocs, first.allocs) {
			t.Errorf("step %d (%s): allocations changed: %d consumer/class pairs, was %d", i, name, len(st.allocs), len(first.allocs))
		}
		if !maps.Equal(st.totals, fresh[name].totals) || st.doubled != 0 {
			t.Errorf("step %d (%s): totals %v (DISK_GB both local and shared on %d roots), a fresh %s cloud has %v", i, name, st.totals, st.doubled, name, fresh[name].totals)
		}
		if out, errOut, code := cmdtest.Rpctl(t, "--db", db, "status", "--check", "rpctl", "--check", "placement-status"); code != 0 {
			t.Errorf("step %d (%s): status exit %d:\n%s%s", i, name, code, out, errOut)
		}
	}
}

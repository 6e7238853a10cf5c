package cmd_test

import (
	"path/filepath"
	"strings"
	"testing"
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
			if _, errOut, code := rpctl(t, "--db", db, "sample-cloud", "--seed", "31", "--nodes", "120"); code != 0 {
				t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
			}
			_, errOut, code := rpctl(t, append([]string{"--db", db, "migrate", "all"}, tc.args...)...)
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
			if _, errOut, code := rpctl(t, "--db", db, "sample-cloud", "--seed", "3", "--nodes", "30"); code != 0 {
				t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
			}
			if _, errOut, code := rpctl(t, append([]string{"--db", db, "migrate", "all"}, layout...)...); code != 0 {
				t.Fatalf("migrate all: exit %d: %s", code, errOut)
			}
		})
	}
}

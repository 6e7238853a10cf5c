package migrate_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
)

// crashLayouts are the layouts a switch goes between, as migrate flags.
var crashLayouts = map[string][]string{
	"flat":          nil,
	"flat+shared":   {"--shared-storage", "pool=cmp1-000*"},
	"nested":        {"--layout", "nested"},
	"nested+shared": {"--layout", "nested", "--shared-storage", "pool=cmp1-000*"},
}

// TestLayoutSwitchCrashConverges (issue 37): every layout switch —
// flat→shared and back, flat→nested, nested→nested+shared and back,
// nested→flat — killed with SIGKILL twice, after a third and after two
// thirds of its writes (driven by the generations the database shows, not
// by time), then run again, ends exactly as the same switch run once
// without a kill: every provider, inventory, trait, aggregate and
// generation, and every allocation (a switch moves them).
func TestLayoutSwitchCrashConverges(t *testing.T) {
	bin := testdb.BuildRpctl(t)
	// Four writers: the nodes a switch moves into a pool must still be
	// written in one order, whatever the workers' timing.
	const parallel = "4"
	steps := []string{"flat", "flat+shared", "flat", "nested", "nested+shared", "nested", "flat"}
	o := samplecloud.Options{Nodes: 300, Cells: 1, Seed: 3}
	for i := 1; i < len(steps); i++ {
		from, to := steps[i-1], steps[i]
		t.Run(from+"→"+to, func(t *testing.T) {
			_, cleanP, cellA, placeA, _ := sampleCloud(t, o)
			_, crashP, cellB, placeB, _ := sampleCloud(t, o)
			run := func(cellM, placeM *testdb.MySQL, verb string, layout []string) *exec.Cmd {
				args := []string{"--cell-db", cellM.DSN, "--placement-db", placeM.DSN, "migrate", verb}
				if verb == "inventory" {
					args = append(append(args, "--parallel", parallel), layout...)
				}
				return exec.Command(bin, args...)
			}
			// exit runs c to its end: 0, or 2 when it skipped rows (a
			// switch refused for want of room, an instance that does not
			// fit), which both clouds must do alike.
			exit := func(c *exec.Cmd) int {
				t.Helper()
				out, err := c.CombinedOutput()
				code := c.ProcessState.ExitCode()
				if err != nil && code != 2 {
					t.Fatalf("%v: %v\n%s", c.Args[1:], err, out)
				}
				return code
			}
			// Both clouds in the layout switched from, with their
			// instances' allocations.
			for _, verb := range []string{"inventory", "allocations"} {
				if a, b := exit(run(cellA, placeA, verb, crashLayouts[from])), exit(run(cellB, placeB, verb, crashLayouts[from])); a != b {
					t.Fatalf("migrate %s %s: exit %d and %d on twin clouds", verb, from, a, b)
				}
			}
			before := generations(t, cleanP)
			if generations(t, crashP) != before {
				t.Fatalf("twin clouds differ before the switch")
			}
			cleanCode := exit(run(cellA, placeA, "inventory", crashLayouts[to]))
			writes := generations(t, cleanP) - before
			want := dumpPlacement(t, cleanP) + "\n" + dumpAllocations(t, cleanP)
			if writes < 3 {
				t.Fatalf("the clean switch made %d writes: nothing to kill in between", writes)
			}

			kills := 0
			for third := int64(1); third <= 2; third++ {
				c := run(cellB, placeB, "inventory", crashLayouts[to])
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() { c.Wait(); close(done) }()
				if waitForWrites(t, crashP, before+writes*third/3, done) {
					c.Process.Signal(syscall.SIGKILL)
					kills++
				}
				<-done
			}
			if code := exit(run(cellB, placeB, "inventory", crashLayouts[to])); code != cleanCode {
				t.Errorf("the re-run after the kills exits %d, the clean switch %d", code, cleanCode)
			}
			got := dumpPlacement(t, crashP) + "\n" + dumpAllocations(t, crashP)
			if kills == 0 {
				t.Errorf("no run was killed: each ended before its writes reached the mark")
			}
			if got != want {
				wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
				var only []string
				for _, l := range gl {
					if !slices.Contains(wl, l) {
						only = append(only, "after the kills: "+l)
					}
				}
				for _, l := range wl {
					if !slices.Contains(gl, l) {
						only = append(only, "clean run:       "+l)
					}
				}
				t.Errorf("after %d SIGKILLs and a re-run the switch %s→%s differs from a clean one (%d lines):\n%s", kills, from, to, len(only), strings.Join(only[:min(len(only), 12)], "\n"))
			}
			t.Logf("%s→%s: %d writes (exit %d), %d kills, then a re-run", from, to, writes, cleanCode, kills)
		})
	}
}

// generations is the sum of every provider's generation: each committed
// write of a node adds to it, so it measures a migration's progress.
func generations(t *testing.T, db *storage.DB) int64 {
	t.Helper()
	var n int64
	if err := db.GetContext(context.Background(), &n, `SELECT COALESCE(SUM(generation), 0) FROM resource_providers`); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitForWrites polls until the generations reach mark (true) or the
// command ends first (false).
func waitForWrites(t *testing.T, db *storage.DB, mark int64, done <-chan struct{}) bool {
	t.Helper()
	for {
		select {
		case <-done:
			return false
		default:
		}
		if generations(t, db) >= mark {
			return true
		}
	}
}

// dumpAllocations renders every allocation by consumer, provider name and
// class.
func dumpAllocations(t *testing.T, db *storage.DB) string {
	t.Helper()
	var rows []struct {
		Consumer string `db:"consumer_id"`
		Provider string `db:"name"`
		Class    string `db:"rc"`
		Used     int64  `db:"used"`
	}
	if err := db.SelectContext(context.Background(), &rows, `SELECT a.consumer_id, rp.name, rc.name AS rc, a.used FROM allocations a
		JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id`); err != nil {
		t.Fatal(err)
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = fmt.Sprintf("alloc %s %s %s=%d", r.Consumer, r.Provider, r.Class, r.Used)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

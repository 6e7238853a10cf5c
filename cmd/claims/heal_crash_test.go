package claims_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// crashGroup is the consumers per transaction of the crash test's heals:
// the test kills a run after each commit, and needs several of them from
// its 1,740 consumers (1,000 a group by default would give two).
const crashGroup = 100

// TestClaimsHealCrashChild is not a test: the crash test runs this test
// binary as rpctl (RPCTL_CRASH_CHILD=1, arguments after "--"), so that it
// can SIGKILL a real process.
func TestClaimsHealCrashChild(t *testing.T) {
	if os.Getenv("RPCTL_CRASH_CHILD") != "1" {
		t.Skip("runs only as the crash test's child process")
	}
	placementdb.DefaultClaimGroup = crashGroup
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(cmd.Run(context.Background(), iostreams.System(), "test", args))
}

// placementState is everything healing may write, in a form two databases
// can be compared by: allocations per consumer, provider and class,
// consumers with generation and owners, provider generations, and the
// integrity rules a half-written PUT would break.
func placementState(t *testing.T, dsnStr string) (state []string, broken []string) {
	t.Helper()
	db, err := sql.Open("mysql", dsnStr)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := func(label, query string, into *[]string) {
		rows, err := db.Query(query)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			parts := []string{label}
			for _, v := range vals {
				parts = append(parts, v.String)
			}
			*into = append(*into, strings.Join(parts, " "))
		}
	}
	q("alloc", `SELECT a.consumer_id, rp.uuid, rc.name, a.used FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id
		JOIN resource_classes rc ON rc.id = a.resource_class_id ORDER BY 1, 2, 3, 4`, &state)
	q("consumer", `SELECT c.uuid, c.generation, p.external_id, u.external_id FROM consumers c JOIN projects p ON p.id = c.project_id
		JOIN users u ON u.id = c.user_id ORDER BY 1`, &state)
	q("provider", `SELECT uuid, generation FROM resource_providers ORDER BY 1`, &state)
	q("duplicate allocation", `SELECT consumer_id, resource_provider_id, resource_class_id FROM allocations
		GROUP BY 1, 2, 3 HAVING COUNT(*) > 1`, &broken)
	q("allocation without consumer", `SELECT DISTINCT a.consumer_id FROM allocations a LEFT JOIN consumers c ON c.uuid = a.consumer_id
		WHERE c.id IS NULL`, &broken)
	q("consumer without allocation", `SELECT c.uuid FROM consumers c LEFT JOIN allocations a ON a.consumer_id = c.uuid WHERE a.id IS NULL`, &broken)
	q("duplicate project", `SELECT external_id FROM projects GROUP BY 1 HAVING COUNT(*) > 1`, &broken)
	q("duplicate user", `SELECT external_id FROM users GROUP BY 1 HAVING COUNT(*) > 1`, &broken)
	return state, broken
}

// TestClaimsHealCrashSafety kills `rpctl claims heal` with SIGKILL at
// random points, runs it again until it completes, and requires the same
// Placement state as one uninterrupted run, with nothing half-written.
func TestClaimsHealCrashSafety(t *testing.T) {
	defer func(g int) { placementdb.DefaultClaimGroup = g }(placementdb.DefaultClaimGroup)
	placementdb.DefaultClaimGroup = crashGroup
	cellA, apiA, plA := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	with := func(cell, api, pl *testdb.MySQL, args ...string) []string {
		return append([]string{"--cell-db", cell.URL, "--api-db", api.URL, "--placement-db", pl.URL}, args...)
	}
	for _, args := range [][]string{{"init"}, {"sample-cloud", "--nodes", "400", "--max-instances-per-node", "9", "--seed", "11"}, {"migrate", "inventory"}} {
		if out, errOut, code := cmdtest.Rpctl(t, with(cellA, apiA, plA, args...)...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// The sample cloud has instances Placement refuses (a disk beyond a
	// provider's max_unit, say), where heal stops with exit 3. Lift
	// max_unit to the total, find the rest on a scratch copy and take them
	// out of the test, so that one run heals everything.
	if _, err := plA.Admin.Exec(fmt.Sprintf("UPDATE `%s`.inventories SET max_unit = total", plA.Name)); err != nil {
		t.Fatal(err)
	}
	cellC, apiC, plC := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	cmdtest.CloneDB(t, cellA, cellC)
	cmdtest.CloneDB(t, apiA, apiC)
	cmdtest.CloneDB(t, plA, plC)
	var refused []string
	for {
		_, errOut, code := cmdtest.Rpctl(t, with(cellC, apiC, plC, "claims", "heal")...)
		if code == 0 || code == 4 {
			break
		}
		var consumer string
		if code != 3 || len(refused) > 50 {
			t.Fatalf("scratch heal: exit %d: %s", code, errOut)
		}
		fmt.Sscanf(errOut[strings.Index(errOut, "consumer ")+len("consumer "):], "%36s", &consumer)
		refused = append(refused, consumer)
		if _, err := cellC.Admin.Exec(fmt.Sprintf("UPDATE `%s`.instances SET deleted = id WHERE uuid = ?", cellC.Name), consumer); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range refused {
		if _, err := cellA.Admin.Exec(fmt.Sprintf("UPDATE `%s`.instances SET deleted = id WHERE uuid = ?", cellA.Name), u); err != nil {
			t.Fatal(err)
		}
	}
	cellB, apiB, plB := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	cmdtest.CloneDB(t, cellA, cellB)
	cmdtest.CloneDB(t, apiA, apiB)
	cmdtest.CloneDB(t, plA, plB)

	start := time.Now()
	if out, errOut, code := cmdtest.Rpctl(t, with(cellA, apiA, plA, "claims", "heal")...); code != 0 {
		t.Fatalf("uninterrupted heal: exit %d\n%s%s", code, out, errOut)
	}
	took := time.Since(start)
	want, broken := placementState(t, plA.DSN)
	if len(broken) > 0 {
		t.Fatalf("uninterrupted heal left broken rows: %v", broken)
	}
	initial, _ := placementState(t, plB.DSN)

	// Each run is killed as soon as the database shows it has committed
	// something (polled): the kill point comes from progress only, never
	// from a time, so a loaded machine changes where it lands inside the
	// next write group's transaction, not how many runs are killed. A run
	// is never killed before its first commit, so each one makes progress
	// and the loop ends; every run but the one that commits the last group
	// is killed mid-way.
	consumers := func() int {
		var n int
		if err := plB.Admin.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM `%s`.consumers", plB.Name)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var healed int
	if err := plA.Admin.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM `%s`.consumers", plA.Name)).Scan(&healed); err != nil {
		t.Fatal(err)
	}
	kills, midway := 0, 0
	for try := 0; try < 60; try++ {
		before := consumers()
		c := exec.Command(os.Args[0], append([]string{"-test.run=^TestClaimsHealCrashChild$", "--"}, with(cellB, apiB, plB, "claims", "heal")...)...)
		c.Env = append(os.Environ(), "RPCTL_CRASH_CHILD=1")
		var out strings.Builder
		c.Stdout, c.Stderr = &out, &out
		killed, err := killOnProgress(t, c, func() bool { return consumers() > before }, 0)
		if killed {
			kills++
			got, broken := placementState(t, plB.DSN)
			if len(broken) > 0 {
				t.Fatalf("after SIGKILL %d: half-written state: %v", kills, broken)
			}
			if !slices.Equal(got, want) && !slices.Equal(got, initial) {
				midway++
			}
			continue
		}
		// The run ended on its own: 0 or 4 is the end, 1 is nova-manage's
		// stop after exactly 50 healed (run again), anything else a failure.
		switch code := exitCode(err); code {
		case 0, 4:
			goto converged
		case 1:
		default:
			t.Fatalf("heal after %d kills: exit %d\n%s", kills, code, out.String())
		}
	}
	t.Fatalf("heal did not complete in 60 runs (%d killed)", kills)
converged:
	if out, errOut, code := cmdtest.Rpctl(t, with(cellB, apiB, plB, "claims", "heal")...); code != 4 {
		t.Errorf("re-run after convergence: exit %d, want 4 (nothing to do)\n%s%s", code, out, errOut)
	}
	got, broken := placementState(t, plB.DSN)
	if len(broken) > 0 {
		t.Errorf("broken rows after %d kills: %v", kills, broken)
	}
	if len(got) != len(want) {
		t.Fatalf("after %d kills: %d state rows, uninterrupted run %d", kills, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("after %d kills: %s, uninterrupted run %s", kills, got[i], want[i])
		}
	}
	t.Logf("%d SIGKILLs (%d mid-way) before the heal completed; %d state rows equal (uninterrupted run %v, %d consumers)", kills, midway, len(want), took, healed)
	if midway < 5 {
		t.Errorf("only %d runs were killed mid-way (%d killed): the test proved too little", midway, kills)
	}
}

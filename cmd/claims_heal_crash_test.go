package cmd_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/iostreams"
)

// TestClaimsHealCrashChild is not a test: the crash test runs this test
// binary as rpctl (RPCTL_CRASH_CHILD=1, arguments after "--"), so that it
// can SIGKILL a real process.
func TestClaimsHealCrashChild(t *testing.T) {
	if os.Getenv("RPCTL_CRASH_CHILD") != "1" {
		t.Skip("runs only as the crash test's child process")
	}
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
	cellA, apiA, plA := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	with := func(cell, api, pl *testdb.MySQL, args ...string) []string {
		return append([]string{"--cell-db", cell.URL, "--api-db", api.URL, "--placement-db", pl.URL}, args...)
	}
	for _, args := range [][]string{{"init"}, {"sample-cloud", "--nodes", "400", "--seed", "11"}, {"migrate", "inventory"}} {
		if out, errOut, code := rpctl(t, with(cellA, apiA, plA, args...)...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// The sample cloud has instances Placement refuses (a disk beyond a
	// provider's max_unit, say), where heal stops with exit 3. Find them
	// on a scratch copy and take them out of the test, so that one run
	// heals everything.
	cellC, apiC, plC := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	cloneDB(t, cellA, cellC)
	cloneDB(t, apiA, apiC)
	cloneDB(t, plA, plC)
	var refused []string
	for {
		_, errOut, code := rpctl(t, with(cellC, apiC, plC, "claims", "heal")...)
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
	cloneDB(t, cellA, cellB)
	cloneDB(t, apiA, apiB)
	cloneDB(t, plA, plB)

	start := time.Now()
	if out, errOut, code := rpctl(t, with(cellA, apiA, plA, "claims", "heal")...); code != 0 {
		t.Fatalf("uninterrupted heal: exit %d\n%s%s", code, out, errOut)
	}
	// Kill points spread over what an uninterrupted heal takes (plus the
	// child's start), later ones past it so that a run can finish.
	span := time.Since(start) + 100*time.Millisecond
	want, broken := placementState(t, plA.DSN)
	if len(broken) > 0 {
		t.Fatalf("uninterrupted heal left broken rows: %v", broken)
	}

	rng := rand.New(rand.NewPCG(11, uint64(time.Now().UnixNano())))
	kills := 0
	for try := 0; try < 40; try++ {
		c := exec.Command(os.Args[0], append([]string{"-test.run=^TestClaimsHealCrashChild$", "--"}, with(cellB, apiB, plB, "claims", "heal")...)...)
		c.Env = append(os.Environ(), "RPCTL_CRASH_CHILD=1")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		limit := span / 2
		if try >= 10 {
			limit = span * time.Duration(try-8)
		}
		delay := time.Duration(rng.Int64N(int64(limit)))
		select {
		case err := <-done:
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 0 && code != 4 {
				t.Fatalf("heal after %d kills: exit %d", kills, code)
			}
			if code == 4 || try > 0 {
				goto converged
			}
		case <-time.After(delay):
			c.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
			_, broken := placementState(t, plB.DSN)
			if len(broken) > 0 {
				t.Fatalf("after a SIGKILL at %v: half-written state: %v", delay, broken)
			}
		}
	}
	t.Fatalf("heal did not complete in 40 tries")
converged:
	if out, errOut, code := rpctl(t, with(cellB, apiB, plB, "claims", "heal")...); code != 4 {
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
	t.Logf("%d SIGKILLs before the heal completed; %d state rows equal", kills, len(want))
	if kills < 5 {
		t.Errorf("only %d runs were killed: the heal finished before the kill points", kills)
	}
}

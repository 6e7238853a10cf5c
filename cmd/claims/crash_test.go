package claims_test

import (
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
)

// seedOrphans writes n consumers: every fourth owned by a live instance on
// node1, the others orphans on node1, node2 or both.
func (c *sqliteCloud) seedOrphans(t *testing.T, n int) {
	t.Helper()
	var ins []nova.Instance
	std := map[string]int{"VCPU": 1, "MEMORY_MB": 64}
	for i := 1; i <= n; i++ {
		switch i % 4 {
		case 0:
			ins = append(ins, liveInstance(i, "1"))
			c.alloc(t, cu(i), time.Hour, map[int64]map[string]int{1: std})
		case 1:
			c.alloc(t, cu(i), time.Hour, map[int64]map[string]int{1: std})
		case 2:
			c.alloc(t, cu(i), time.Hour, map[int64]map[string]int{2: std})
		case 3:
			c.alloc(t, cu(i), time.Hour, map[int64]map[string]int{1: std, 2: {"DISK_GB": 1}})
		}
	}
	c.instances(t, ins...)
}

// dump is the Placement state an audit can change, one line per row.
func (c *sqliteCloud) dump(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT CONCAT(a.consumer_id, ' ', rp.uuid, ' ', rc.name, '=', a.used) FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id
			JOIN resource_classes rc ON rc.id = a.resource_class_id ORDER BY a.consumer_id, rp.uuid, rc.name`,
		`SELECT CONCAT('consumer ', uuid, ' generation ', generation) FROM consumers ORDER BY uuid`,
		`SELECT CONCAT('provider ', uuid, ' generation ', generation) FROM resource_providers ORDER BY uuid`,
	} {
		var lines []string
		if err := c.p.Select(&lines, q); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

// TestClaimsAuditDeleteCrashConverges kills `claims audit --delete` with
// SIGKILL at random moments, runs it again to the end, and requires the
// Placement rows of an uninterrupted run (MariaDB).
func TestClaimsAuditDeleteCrashConverges(t *testing.T) {
	bin := testdb.BuildRpctl(t)
	const n = 400
	clean, crashed := newMySQLCloud(t), newMySQLCloud(t)
	clean.seedOrphans(t, n)
	crashed.seedOrphans(t, n)
	if a, b := clean.dump(t), crashed.dump(t); a != b {
		t.Fatal("the two copies differ before the test")
	}
	run := func(c *sqliteCloud) *exec.Cmd {
		return exec.Command(bin, append(append([]string{}, c.args...), "claims", "audit", "--delete")...)
	}
	initial := crashed.dump(t)
	start := time.Now()
	if out, err := run(clean).CombinedOutput(); exitCode(err) != 4 {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	took := time.Since(start)
	want := clean.dump(t)

	// Each kill lands just after the run has removed something (polled in
	// the database) plus a random moment, so every kill is mid-way; partial
	// counts those that left a half-done audit behind.
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	count := func() int {
		var n int
		if err := crashed.p.Get(&n, `SELECT COUNT(*) FROM allocations`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	killed, partial := 0, 0
	// A run that finishes before its kill (a loaded machine polls slowly)
	// deletes everything, so the copy is seeded afresh and the next kill
	// follows the first progress at once: the kills stay mid-way however
	// slow the machine is.
	for i := 0; i < 12 && (partial == 0 || crashed.dump(t) != want); i++ {
		before := count()
		cmd := run(crashed)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		delay := time.Duration(rng.Intn(int(took/time.Millisecond)/4+1)) * time.Millisecond
		if i > 0 && partial == 0 {
			delay = 0
		}
		wasKilled, err := killOnProgress(t, cmd, func() bool { return count() < before }, delay)
		switch code := exitCode(err); {
		case wasKilled:
			killed++
			d := crashed.dump(t)
			if d != initial && d != want {
				partial++
			}
			if d == want && partial == 0 {
				// The server ran the run's last script to its end after
				// the kill (it does not stop when its client goes): as a
				// run that finished before its kill, seed afresh.
				crashed = newMySQLCloud(t)
				crashed.seedOrphans(t, n)
				if d := crashed.dump(t); d != initial {
					t.Fatal("a fresh copy differs from the first one")
				}
			}
		case code == 4 || code == 0:
			// Finished before the kill (4), or found nothing left (0): the
			// server ran the previous killed run's last script to its end
			// after this loop had seen it mid-way (it does not stop when
			// its client goes).
			if partial == 0 {
				crashed = newMySQLCloud(t)
				crashed.seedOrphans(t, n)
				if d := crashed.dump(t); d != initial {
					t.Fatal("a fresh copy differs from the first one")
				}
			}
		default:
			t.Fatalf("run %d: exit %d (%v)\n%s", i, code, err, out.String())
		}
	}
	if partial == 0 {
		t.Fatalf("no kill landed mid-way through a delete run (%d killed, uninterrupted run took %v): the test proved nothing", killed, took)
	}
	out, err := run(crashed).CombinedOutput()
	if code := exitCode(err); code != 4 && code != 0 {
		t.Fatalf("final run: exit %d\n%s", code, out)
	}
	if got := crashed.dump(t); got != want {
		t.Fatalf("after %d kills and a re-run the Placement rows differ from an uninterrupted run's:\n%s", killed, lineDiff(want, got))
	}
	if out, err := run(crashed).CombinedOutput(); exitCode(err) != 0 {
		t.Fatalf("a further run still finds orphans: %v\n%s", err, out)
	}
	t.Logf("%d runs killed, %d of them mid-way (uninterrupted run: %v)", killed, partial, took)
}

// killOnProgress starts cmd, polls progressed every 2 ms while it runs, and
// once progressed says the run has changed something, waits delay and
// SIGKILLs it. It returns whether the kill ended it (a run may end on its
// own first) and cmd's Wait error.
func killOnProgress(t *testing.T, cmd *exec.Cmd, progressed func() bool, delay time.Duration) (killed bool, err error) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			return false, err
		case <-time.After(2 * time.Millisecond):
			if progressed() {
				time.Sleep(delay)
				cmd.Process.Signal(syscall.SIGKILL)
				err := <-done
				return err != nil && strings.Contains(err.Error(), "killed"), err
			}
		}
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "- %s\n+ %s\n", a, c)
		}
	}
	return b.String()
}

// execCommand runs a process and returns its combined output.
func execCommand(bin string, args ...string) (string, error) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

package cmd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// hangAfter is how long rpctl may take to exit after a signal before the
// test calls it hung. It is no speed requirement: the searches and
// migrations signalled here would run for hours (or to the end) if the
// signal were ignored, and how promptly a cancelled search stops is proven
// in steps, without a clock, by candidates' TestCancelStopsAtNextPoll. A
// loaded two-core machine has taken 1.7 s; thirty is far from both.
const hangAfter = 30 * time.Second

// signalAfter starts rpctl, waits until its standard error shows ready
// (progress, never a guessed time), sends sig, and returns the exit code,
// stdout and stderr; it fails the test if rpctl is still running
// hangAfter after the signal.
func signalAfter(t *testing.T, bin string, sig syscall.Signal, ready string, args ...string) (int, string, string) {
	t.Helper()
	c := exec.Command(bin, args...)
	var out bytes.Buffer
	c.Stdout = &out
	errPipe, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	seen := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(errPipe)
		once := false
		for sc.Scan() {
			errOut.WriteString(sc.Text() + "\n")
			if !once && strings.Contains(sc.Text(), ready) {
				once = true
				close(seen)
			}
		}
		io.Copy(io.Discard, errPipe)
	}()
	select {
	case <-seen:
	case <-time.After(2 * hangAfter):
		c.Process.Kill()
		t.Fatalf("rpctl never printed %q", ready)
	}
	sent := time.Now()
	if err := c.Process.Signal(sig); err != nil {
		t.Fatalf("signal: %v (did rpctl finish before it?)", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- c.Wait() }()
	select {
	case err = <-waited:
	case <-time.After(hangAfter):
		c.Process.Kill()
		<-waited
		t.Fatalf("rpctl still running %v after %v: it ignores the signal", hangAfter, sig)
	}
	t.Logf("exited %v after %v", time.Since(sent).Round(time.Millisecond), sig)
	<-copied
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return c.ProcessState.ExitCode(), out.String(), errOut.String()
}

// TestSignalsStopCandidates: SIGTERM and SIGINT stop a search that would
// Run for hours (--max-candidates 0 lifts the ceiling), with 143 and 130
// and a line naming the signal (no wall-clock bound: see hangAfter).
func TestSignalsStopCandidates(t *testing.T) {
	bin := cmdtest.BuildRpctl(t)
	db := cmdtest.NestedCloud(t, bin)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGTERM, 143, "SIGTERM"}, {syscall.SIGINT, 130, "SIGINT"}} {
		t.Run(tc.name, func(t *testing.T) {
			// --verbose prints the request line just before the search
			// starts: the signal is sent on that progress, not after a
			// guessed time.
			code, _, stderr := signalAfter(t, bin, tc.sig, "GET /allocation_candidates?", "--verbose", "--db", db, "candidates", "--query", cmdtest.TwentyGroups(), "--max-candidates", "0")
			if code != tc.code || !strings.Contains(stderr, "interrupted by "+tc.name) {
				t.Errorf("exit %d, want %d and \"interrupted by %s\"; stderr:\n%s", code, tc.code, tc.name, stderr)
			}
		})
	}
}

// TestCandidateCeiling: the query no longer grows until the OOM
// killer strikes (or Go dies with exit 2, "invalid request"): it stops at
// the documented ceiling with exit 3 and one line naming the ceiling and
// the flags that change it.
func TestCandidateCeiling(t *testing.T) {
	bin := cmdtest.BuildRpctl(t)
	db := cmdtest.NestedCloud(t, bin)
	c := exec.Command(bin, "--db", db, "candidates", "--query", cmdtest.TwentyGroups())
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	c.Run()
	msg := errOut.String()
	if c.ProcessState.ExitCode() != 3 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "100000") ||
		!strings.Contains(msg, "--limit") || !strings.Contains(msg, "--max-candidates 0") {
		t.Fatalf("exit %d, stderr %q; want 3 and one line naming the ceiling, --limit and --max-candidates", c.ProcessState.ExitCode(), msg)
	}
	// The bound the help text states.
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 512*1024 {
		t.Errorf("peak RSS %d MB, the documented bound is 512 MB", ru.Maxrss/1024)
	}
	// --limit keeps the first N, and --max-candidates N stops there.
	for _, extra := range [][]string{{"--limit", "5"}, {"--max-candidates", "7"}} {
		o, e, code := cmdtest.Rpctl(t, append([]string{"--db", db, "candidates", "--query", cmdtest.TwentyGroups(), "-f", "json"}, extra...)...)
		var body struct {
			AllocationRequests []json.RawMessage `json:"allocation_requests"`
		}
		if code != 0 || json.Unmarshal([]byte(o), &body) != nil || len(body.AllocationRequests) == 0 {
			t.Errorf("%v: exit %d, %s", extra, code, e)
		}
	}
}

// TestSignalStopsMigration: SIGTERM in the middle of a migration stops it
// before its end (no wall-clock bound: see hangAfter) with 143, after
// printing a summary of what was written; a re-run migrates the rest and
// the two add up.
func TestSignalStopsMigration(t *testing.T) {
	bin := cmdtest.BuildRpctl(t)
	db := filepath.Join(t.TempDir(), "cloud.db")
	cmdtest.MustRun(t, bin, "--db", db, "sample-cloud", "--nodes", "2000", "--seed", "3", "--max-instances-per-node", "0")
	args := []string{"--db", db, "migrate", "inventory", "--layout", "nested", "--batch-size", "50", "-f", "json"}
	code, stdout, stderr := signalAfter(t, bin, syscall.SIGTERM, "rows matched query", args...)
	if code != 143 {
		t.Fatalf("exit %d, want 143\n%s", code, stderr)
	}
	// -f json prints the summary table's rows.
	type summary struct {
		Migrations []struct {
			TotalNeeded int `json:"total_needed"`
			Completed   int `json:"completed"`
		}
	}
	var first summary
	if err := json.Unmarshal([]byte(stdout), &first.Migrations); err != nil || len(first.Migrations) != 1 || first.Migrations[0].Completed == 0 {
		t.Fatalf("no summary of what was written before the signal: %v %q\n%s", err, stdout, stderr)
	}
	if first.Migrations[0].Completed >= 1900 {
		t.Fatalf("the migration finished (%d) before the signal", first.Migrations[0].Completed)
	}
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("re-run: %v", err)
	}
	var second summary
	if err := json.Unmarshal(out, &second.Migrations); err != nil {
		t.Fatal(err)
	}
	// The re-run finds exactly what the first run's summary did not
	// Count, and migrates all of it.
	if s := second.Migrations[0]; s.Completed != s.TotalNeeded || first.Migrations[0].Completed+s.TotalNeeded < 1900 {
		t.Errorf("first run %d completed, re-run %d of %d", first.Migrations[0].Completed, s.Completed, s.TotalNeeded)
	}
	// A third run has nothing left: the two runs converged.
	o, e, code := cmdtest.Rpctl(t, "--db", db, "migrate", "inventory", "--layout", "nested", "-f", "json")
	if code != 0 || !strings.Contains(o, `"completed": 0`) && !strings.Contains(o, `"completed":0`) {
		t.Errorf("third run: exit %d %s %s", code, o, e)
	}
}

// granularQuery is n one-VCPU groups, group_policy none.
func granularQuery(n int) string {
	var q []string
	for i := 1; i <= n; i++ {
		q = append(q, fmt.Sprintf("resources%d=VCPU:1", i))
	}
	return strings.Join(q, "&") + "&group_policy=none"
}

// TestBoundedSearches: candidates and capacity with 12 to 200 granular
// groups on the 200-node nested cloud answer, or stop at the candidate
// ceiling (3, also for memory) or the step ceiling (5) with one line, and
// stay under the documented 512 MB of peak RSS. 129 and 200 groups with
// limit 1, which used to spin for ever, end at the default step ceiling.
// The work is counted in steps (--max-steps) and bytes, never seconds.
func TestBoundedSearches(t *testing.T) {
	bin := cmdtest.BuildRpctl(t)
	db := cmdtest.NestedCloud(t, bin)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"candidates", "--query", granularQuery(12)}, 3},
		{[]string{"candidates", "--query", granularQuery(16), "--limit", "1"}, 0},
		{[]string{"candidates", "--query", granularQuery(128), "--limit", "1"}, 0},
		{[]string{"candidates", "--query", granularQuery(129), "--limit", "1"}, 5},
		{[]string{"candidates", "--query", granularQuery(200), "--limit", "1", "--max-steps", "20000000"}, 5},
		{[]string{"candidates", "--query", granularQuery(129), "--limit", "1", "--explain", "--max-steps", "20000000"}, 5},
		{[]string{"capacity", "--flavor", cmdtest.GranularFlavorFile(t, 8)}, 0},
		{[]string{"capacity", "--flavor", cmdtest.GranularFlavorFile(t, 12)}, 3},
		{[]string{"capacity", "--flavor", cmdtest.GranularFlavorFile(t, 64)}, 3},
		{[]string{"capacity", "--flavor", cmdtest.GranularFlavorFile(t, 129), "--max-steps", "20000000"}, 5},
		{[]string{"capacity", "--flavor", cmdtest.GranularFlavorFile(t, 200), "--max-steps", "20000000"}, 5},
	} {
		c := exec.Command(bin, append([]string{"--db", db}, tc.args...)...)
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		c.Run()
		name := strings.Join(tc.args[:2], " ")
		code := c.ProcessState.ExitCode()
		if code != tc.code || (code != 0 && strings.Count(errOut.String(), "\n") != 1) {
			t.Errorf("%s (%d args): exit %d, want %d; stderr %q", name, len(tc.args), code, tc.code, errOut.String())
		}
		if code == 5 && !strings.Contains(errOut.String(), "--max-steps") {
			t.Errorf("%s: the step ceiling's line does not name --max-steps: %q", name, errOut.String())
		}
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 512*1024 {
			t.Errorf("%s: peak RSS %d MB, the documented bound is 512 MB", name, ru.Maxrss/1024)
		}
	}
}

// TestSignalsStopBoundedSearches: SIGTERM during candidates and capacity
// (searches that would not end: --max-steps 0) exits 143 and leaves the
// cloud database byte-identical, with no journal beside it.
func TestSignalsStopBoundedSearches(t *testing.T) {
	bin := cmdtest.BuildRpctl(t)
	db := cmdtest.NestedCloud(t, bin)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ready string // --verbose's line just before the search starts
		args  []string
	}{
		{"GET /allocation_candidates?", []string{"candidates", "--query", granularQuery(129), "--limit", "1", "--max-steps", "0"}},
		{"capacity: counting", []string{"capacity", "--flavor", cmdtest.GranularFlavorFile(t, 129), "--max-steps", "0"}},
	} {
		args := tc.args
		code, _, stderr := signalAfter(t, bin, syscall.SIGTERM, tc.ready, append([]string{"--verbose", "--db", db}, args...)...)
		if code != 143 || !strings.Contains(stderr, "interrupted by SIGTERM") {
			t.Errorf("%s: exit %d, want 143; stderr:\n%s", args[0], code, stderr)
		}
		after, err := os.ReadFile(db)
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("%s: the database changed (%v)", args[0], err)
		}
		for _, j := range []string{"-wal", "-journal", "-shm"} {
			if _, err := os.Stat(db + j); err == nil {
				t.Errorf("%s: %s left beside the database", args[0], j)
			}
		}
	}
}

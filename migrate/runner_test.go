package migrate

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// fakeMigration migrates from a pool of records; bad ones are found but
// never migrated, as with Nova's unmigratable rows.
type fakeMigration struct {
	name      string
	good, bad int
	fail      error
	// wrote: records committed before fail struck (a lost connection).
	wrote int
	// cancel, when set, is called in Run after writing wrote records, as
	// a signal arriving mid-batch.
	cancel func()
}

func (m *fakeMigration) Name() string { return m.name }

func (m *fakeMigration) Run(_ context.Context, count int) (int, int, error) {
	if m.cancel != nil {
		m.cancel()
		return m.good, m.wrote, context.Canceled
	}
	if m.fail != nil {
		return m.wrote + m.bad, m.wrote, m.fail
	}
	found := min(m.good+m.bad, count)
	done := min(m.good, count)
	m.good -= done
	var err error
	if m.bad > 0 && found > done {
		err = RowErrors{{Migration: m.name, ID: 7, Host: "cn7", Err: errors.New("bad pci_stats")}}
	}
	return found, done, err
}

func TestRunnerMatchesNovaManage(t *testing.T) {
	tests := []struct {
		name      string
		ms        []*fakeMigration
		max       int
		unlimited bool
		wantExit  int
		wantRows  string
	}{
		{"unlimited runs batches until nothing is left", []*fakeMigration{{name: "b", good: 120}, {name: "a", good: 3}}, 0, true, 0,
			"a:3/3 b:120/120"},
		{"max-count stops after the budget and says more may remain", []*fakeMigration{{name: "first", good: 5}, {name: "second", good: 5}}, 3, false, 1,
			"first:3/3"},
		{"max-count with nothing to do exits 0", []*fakeMigration{{name: "x"}}, 10, false, 0, "x:0/0"},
		{"bad rows are reported and end with exit 2", []*fakeMigration{{name: "inv", good: 2, bad: 1}}, 0, true, 2,
			"inv:4/2"},
		{"a failing migration is exit 2 and counts nothing", []*fakeMigration{{name: "boom", fail: errors.New("db gone")}, {name: "ok", good: 1}}, 0, true, 2,
			"boom:0/0 ok:1/1"},
		// The undercount: 79 of 80 providers were written before
		// the database failed, and the summary said 0.
		{"a migration failing mid-batch counts what it wrote", []*fakeMigration{{name: "inv", wrote: 79, bad: 1, fail: errors.New("connection lost")}}, 0, true, 2,
			"inv:80/79"},
		// Nova's runner goes on batching the others until a batch
		// migrates nothing (issue 34: one failing migration kept the later
		// cells from being healed).
		{"a failing migration does not stop the others' batches", []*fakeMigration{{name: "agg", fail: errors.New("sync stopped")}, {name: "heal", good: 2500}}, 0, true, 2,
			"agg:0/0 heal:2500/2500"},
		{"max-count: a failure while others ran is exit 1, as nova-manage", []*fakeMigration{{name: "agg", fail: errors.New("sync stopped")}, {name: "heal", good: 2500}}, 100, false, 1,
			"agg:0/0 heal:100/100"},
		{"max-count: a failure and nothing else ran is exit 2", []*fakeMigration{{name: "agg", fail: errors.New("sync stopped")}, {name: "heal"}}, 100, false, 2,
			"agg:0/0 heal:0/0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ms []Migration
			for _, m := range tc.ms {
				ms = append(ms, m)
			}
			var log bytes.Buffer
			r := &Runner{Migrations: ms, Log: &log}
			sum, err := r.Run(context.Background(), tc.max, tc.unlimited)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, row := range sum.Rows {
				got = append(got, row.Migration+":"+strconv.Itoa(row.TotalNeeded)+"/"+strconv.Itoa(row.Completed))
			}
			if strings.Join(got, " ") != tc.wantRows || sum.Exit != tc.wantExit {
				t.Errorf("rows %v exit %d, want %s exit %d\nlog:\n%s", got, sum.Exit, tc.wantRows, tc.wantExit, log.String())
			}
		})
	}
}

func TestRunnerRejectsBadMaxCount(t *testing.T) {
	for _, n := range []int{0, -1} {
		sum, err := (&Runner{}).Run(context.Background(), n, false)
		if !errors.Is(err, ErrMaxCount) || sum.Exit != 127 {
			t.Errorf("max-count %d: err %v exit %d", n, err, sum.Exit)
		}
	}
}

func TestRunnerLogLines(t *testing.T) {
	var log bytes.Buffer
	r := &Runner{Migrations: []Migration{&fakeMigration{name: "m", good: 2}}, Log: &log, Batch: NovaManageBatch}
	if _, err := r.Run(context.Background(), 0, true); err != nil {
		t.Fatal(err)
	}
	want := "Running batches of 50 until complete\n2 rows matched query m, 2 migrated\n"
	if log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
}

// TestRunnerInterrupted: a signal mid-batch ends the run with the cause
// and a summary of what was written.
func TestRunnerInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := errors.New("terminated signal received")
	ms := []Migration{&fakeMigration{name: "a", good: 2}, &fakeMigration{name: "b", good: 100, wrote: 40, cancel: func() { cancel(sig) }}, &fakeMigration{name: "c", good: 5}}
	sum, err := (&Runner{Migrations: ms}).Run(ctx, 0, true)
	if !errors.Is(err, sig) {
		t.Fatalf("err = %v, want the signal", err)
	}
	var got []string
	for _, row := range sum.Rows {
		got = append(got, row.Migration+":"+strconv.Itoa(row.TotalNeeded)+"/"+strconv.Itoa(row.Completed))
	}
	if strings.Join(got, " ") != "a:2/2 b:100/40" || sum.Exit != 2 {
		t.Errorf("rows %v exit %d, want a:2/2 b:100/40 exit 2", got, sum.Exit)
	}
}

// sharedMigration is a pool of records of which another run migrates
// the first `others` while this one works: Run still reports them done
// (the batches go on), DoneElsewhere says they were not this run's.
type sharedMigration struct {
	fakeMigration
	others, elsewhere int
}

func (m *sharedMigration) Run(ctx context.Context, count int) (int, int, error) {
	found, done, err := m.fakeMigration.Run(ctx, count)
	n := min(done, m.others)
	m.others -= n
	m.elsewhere += n
	return found, done, err
}

func (m *sharedMigration) DoneElsewhere() int { return m.elsewhere }

func TestRunnerCountsOnlyItsOwnWrites(t *testing.T) {
	tests := []struct {
		name         string
		good, others int
		batch        int
		want         int
	}{
		{"another run wrote some", 3000, 1200, 1000, 1800},
		{"another run wrote a whole first batch: the next batches still run", 3000, 1000, 1000, 2000},
		{"another run wrote everything", 3000, 3000, 1000, 0},
		{"alone", 30, 0, 1000, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &sharedMigration{fakeMigration: fakeMigration{name: "inv", good: tc.good}, others: tc.others}
			var log bytes.Buffer
			sum, err := (&Runner{Migrations: []Migration{m}, Batch: tc.batch, Log: &log}).Run(context.Background(), 0, true)
			if err != nil || sum.Exit != 0 {
				t.Fatalf("exit %d, err %v", sum.Exit, err)
			}
			if r := sum.Rows[0]; r.Completed != tc.want || r.TotalNeeded != tc.good {
				t.Errorf("completed %d of %d, want %d of %d\n%s", r.Completed, r.TotalNeeded, tc.want, tc.good, log.String())
			}
			if m.good != 0 {
				t.Errorf("%d records left unvisited", m.good)
			}
			if tc.others > 0 && !strings.Contains(log.String(), "found migrated by another run") {
				t.Errorf("the log does not say another run migrated some:\n%s", log.String())
			}
		})
	}
}

// TestRunnerTimesEachMigration (issue 35): the summary keeps a time for
// every migration that ran, under its name (its value is the clock's).
func TestRunnerTimesEachMigration(t *testing.T) {
	r := &Runner{Migrations: []Migration{&fakeMigration{name: "a", good: 3}, &fakeMigration{name: "b"}}}
	sum, err := r.Run(context.Background(), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, ok := sum.Took[name]; !ok {
			t.Errorf("no time for %s: %v", name, sum.Took)
		}
	}
	if len(sum.Took) != 2 {
		t.Errorf("times %v, want a and b", sum.Took)
	}
}

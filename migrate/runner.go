// Package migrate runs rpctl's online data migrations the way
// `nova-manage db online_data_migrations` runs Nova's: in batches, each
// migration idempotent, with the same summary table and exit codes.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/rpctl/rpctl/internal/sanitize"
)

// Migration is one online data migration. It follows Nova's contract
// (nova/cmd/manage.py): migrate at most count records and report found, the
// records that still needed migrating when it looked (all of them, or up to
// count), and done, those it migrated. found > 0 with done == 0 means the rest
// cannot be migrated (bad rows); the runner then stops asking.
type Migration interface {
	Name() string
	Run(ctx context.Context, count int) (found, done int, err error)
}

// SharedWork is implemented by a migration whose rows another run may
// migrate at the same time (two operators, or two nodes of a Galera
// cluster): DoneElsewhere is how many of the rows its Runs reported done so
// far were found already migrated by another writer. The summary's
// Completed counts only this run's own writes.
type SharedWork interface {
	DoneElsewhere() int
}

// PhaseParts is implemented by a migration part of whose time the summary
// shows apart (issue 35): the inventory step's layout switch.
type PhaseParts interface {
	Parts() []PhasePart
}

// PhasePart is a named part of a migration's time: Items of Unit took
// Took.
type PhasePart struct {
	Name  string
	Items int
	Unit  string
	Took  time.Duration
}

// Stopper is implemented by a migration that goes on working between its
// Runs (the inventory migration plans the next batches while it writes):
// Stop ends that work and waits for it, once the run is over.
type Stopper interface {
	Stop()
}

// byOthers is the log note for rows another run migrated.
func byOthers(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d more found migrated by another run)", n)
}

// RowError is a record a migration skipped: its data is bad, or (Unfit)
// the record is sound but cannot be migrated as things stand (an instance
// with no room in its node's tree). The migration keeps going; the run ends
// with exit code 2.
type RowError struct {
	// Unfit marks a record that is not bad: Err says what to change.
	Unfit     bool
	Migration string
	Cell      string
	ID        int64
	Host      string
	// What names the record when it is not a compute node ("instance
	// <uuid>").
	What string
	Err  error
}

func (e *RowError) Error() string {
	where := fmt.Sprintf("compute node id=%d", e.ID)
	if e.What != "" {
		where = e.What
	}
	if e.Host != "" {
		where += fmt.Sprintf(" (%s)", shorten(e.Host))
	}
	if e.Cell != "" {
		where = fmt.Sprintf("cell %s: %s", sanitize.String(e.Cell), where)
	}
	return fmt.Sprintf("%s: %s: %v", e.Migration, where, e.Err)
}

// RowErrors is what a migration returns when some records were skipped; it is
// not fatal to the run.
type RowErrors []*RowError

func (r RowErrors) Error() string {
	if len(r) == 1 {
		return r[0].Error()
	}
	return fmt.Sprintf("%d bad rows, first: %v", len(r), r[0])
}

// Row is one line of the summary table; totals are summed over batches, as
// nova-manage does.
type Row struct {
	Migration   string `json:"migration"`
	TotalNeeded int    `json:"total_needed"`
	Completed   int    `json:"completed"`
}

// Summary is the outcome of a run.
type Summary struct {
	Rows []Row `json:"migrations"`
	// Exit is nova-manage's code: 0 nothing left, 1 more may remain after
	// --max-count, 2 a migration failed or skipped bad rows.
	Exit int `json:"exit_code"`
	// Took is each migration's time, its batches of every pass together
	// (issue 35: the summary says each phase's time); not in the table,
	// which is nova-manage's.
	Took map[string]time.Duration `json:"-"`
	// Parts are the parts of a migration's time shown apart (PhaseParts).
	Parts map[string][]PhasePart `json:"-"`
	// RowErrors are the skipped records; Errors the migrations that failed.
	RowErrors []*RowError `json:"-"`
	Errors    []error     `json:"-"`
}

// NovaManageBatch is nova-manage's batch size when --max-count is not given.
const NovaManageBatch = 50

// DefaultBatch is rpctl's batch size when --max-count is not given. A batch
// is only where the runner stops to count: every migration still writes in
// small transactions (the inventory migration in groups of at most 100
// nodes), so a larger batch holds no lock longer. It lets the inventory
// migration keep its parallel workers busy between batches: on 100,000
// nodes it migrates ~1.4x faster than with nova-manage's 50, which
// --batch-size 50 reproduces.
const DefaultBatch = 1000

// Runner runs migrations in order.
type Runner struct {
	Migrations []Migration
	// Log receives nova-manage's progress lines ("N rows matched query X, M
	// migrated"); nil discards them.
	Log io.Writer
	// Batch overrides DefaultBatch for unlimited runs.
	Batch int
}

// ErrMaxCount is returned for a --max-count below 1 (nova-manage exits 127).
//
//lint:ignore ST1005 nova-manage's exact words, which scripts may match.
var ErrMaxCount = errors.New("Must supply a positive value for max_number")

// Run runs the migrations. maxCount <= 0 with unlimited=true runs batches
// until a batch migrates nothing; otherwise one batch of at most maxCount.
func (r *Runner) Run(ctx context.Context, maxCount int, unlimited bool) (Summary, error) {
	log := r.Log
	if log == nil {
		log = io.Discard
	}
	if !unlimited && maxCount < 1 {
		return Summary{Exit: 127}, ErrMaxCount
	}
	for _, m := range r.Migrations {
		if s, ok := m.(Stopper); ok {
			defer s.Stop()
		}
	}
	if unlimited {
		maxCount = r.Batch
		if maxCount <= 0 {
			maxCount = DefaultBatch
		}
		fmt.Fprintf(log, "Running batches of %d until complete\n", maxCount)
	}
	totals := map[string]*Row{}
	seenElsewhere := map[string]int{}
	var order []string
	var sum Summary
	failed := false
	// finish builds the summary from what was done so far; it is also what
	// an interrupted run (signal, lost connection) reports.
	finish := func() Summary {
		for _, name := range order {
			sum.Rows = append(sum.Rows, *totals[name])
		}
		for _, m := range r.Migrations {
			if pp, ok := m.(PhaseParts); ok {
				if parts := pp.Parts(); len(parts) > 0 {
					if sum.Parts == nil {
						sum.Parts = map[string][]PhasePart{}
					}
					sum.Parts[m.Name()] = parts
				}
			}
		}
		sort.Slice(sum.Rows, func(i, j int) bool { return sum.Rows[i].Migration < sum.Rows[j].Migration })
		return sum
	}
	for {
		ran := 0
		batchFailed := false
		for _, m := range r.Migrations {
			if err := ctx.Err(); err != nil {
				sum.Exit = 2
				return finish(), context.Cause(ctx)
			}
			began := time.Now()
			found, done, err := m.Run(ctx, maxCount-ran)
			took := time.Since(began)
			failedNow := false
			// mine is what this run wrote; done (which keeps the batches
			// going) also holds rows another run migrated meanwhile.
			mine, elsewhere := done, 0
			if s, ok := m.(SharedWork); ok {
				now := s.DoneElsewhere()
				elsewhere = now - seenElsewhere[m.Name()]
				seenElsewhere[m.Name()] = now
				mine -= elsewhere
			}
			row := totals[m.Name()]
			if row == nil {
				row = &Row{Migration: m.Name()}
				totals[m.Name()] = row
				order = append(order, m.Name())
			}
			if sum.Took == nil {
				sum.Took = map[string]time.Duration{}
			}
			sum.Took[m.Name()] += took
			if err != nil {
				var rows RowErrors
				switch {
				case errors.As(err, &rows):
					sum.RowErrors = append(sum.RowErrors, rows...)
					for _, re := range rows {
						fmt.Fprintf(log, "Skipped %v\n", re)
					}
				case ctx.Err() != nil:
					// Interrupted: what was written still counts.
					if found > 0 {
						fmt.Fprintf(log, "%d rows matched query %s, %d migrated%s (interrupted)\n", found, m.Name(), mine, byOthers(elsewhere))
					}
					row.TotalNeeded += found
					row.Completed += mine
					sum.Exit = 2
					return finish(), context.Cause(ctx)
				default:
					fmt.Fprintf(log, "Error attempting to run %s: %v\n", m.Name(), err)
					sum.Errors = append(sum.Errors, fmt.Errorf("%s: %w", m.Name(), err))
					// Nova's runner counts a failed batch as nothing
					// migrated; here the records written before the
					// failure were committed and are counted, so that
					// Completed is what the databases hold, but they do
					// not keep the batches going (as in Nova: a migration
					// that fails at every batch must not loop for ever).
					batchFailed, failedNow = true, true
				}
			}
			if found > 0 {
				fmt.Fprintf(log, "%d rows matched query %s, %d migrated%s\n", found, m.Name(), mine, byOthers(elsewhere))
			}
			row.TotalNeeded += found
			row.Completed += mine
			if !failedNow {
				ran += done
			}
			if ran >= maxCount {
				break
			}
		}
		failed = failed || batchFailed
		// Nova's online_data_migrations: batches go on until one migrates
		// nothing, a migration's failure included (the others' work may
		// be what it waits for, and one migration's bad rows must not keep
		// another's cells from being migrated); with --max-count the one
		// batch's failure counts only when nothing else ran.
		if !unlimited || ran == 0 {
			switch {
			case failed && (unlimited || ran == 0), len(sum.RowErrors) > 0:
				sum.Exit = 2
			case !unlimited && ran > 0:
				sum.Exit = 1
			}
			return finish(), nil
		}
	}
}

package migrate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
)

// gatedCell hands out its first `after` rows, then holds the scan until
// open is closed (or its context ends): a plan that had to be complete
// before the first write would wait for ever.
type gatedCell struct {
	migrate.Cell
	after int
	open  <-chan struct{}
	// stuck is set when the hang guard, not open, let the scan go on.
	stuck bool
}

// hangGuard bounds the wait of a gatedCell: it is not an expected time,
// only what keeps a broken pipeline from hanging the test run.
const hangGuard = 5 * time.Minute

func (c *gatedCell) ScanNodesForInventory(ctx context.Context, fn func(nova.ComputeNode)) error {
	n := 0
	return c.Cell.ScanNodesForInventory(ctx, func(cn nova.ComputeNode) {
		if n++; n == c.after {
			select {
			case <-c.open:
			case <-ctx.Done():
			case <-time.After(hangGuard):
				c.stuck = true
			}
		}
		fn(cn)
	})
}

// TestInventoryWritesWhilePlanning: the first batches are written while
// the later rows are still read and planned (the cell holds the rest of
// its rows until a group has been written), the progress has no total
// until the plan is complete, and a --max-count run ends the planning it
// leaves going.
func TestInventoryWritesWhilePlanning(t *testing.T) {
	ctx := context.Background()
	cell, placement, _, _, _ := sampleCloud(t, samplecloud.Options{Nodes: 1200, Seed: 6, MaxInstancesPerNode: -1})
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutFlat, Ratios: config.DefaultOptions().Ratios}
	for _, tc := range []struct {
		name      string
		maxCount  int
		unlimited bool
		exit      int
		completed int
	}{
		{"--max-count 100", 100, false, 1, 100},
		{"the rest", 0, true, 0, 1100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := make(chan struct{})
			gc := &gatedCell{Cell: cellStores(cell)[0], after: 600, open: open}
			m := &migrate.Inventory{Cells: []migrate.Cell{gc}, Placement: placementStore(placement), Config: cfg, Parallel: 2}
			var once sync.Once
			firstTotal := 0
			m.Progress = func(done, total int) {
				once.Do(func() {
					firstTotal = total
					close(open)
				})
			}
			sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}, Batch: 100}).Run(ctx, tc.maxCount, tc.unlimited)
			if err != nil {
				t.Fatal(err)
			}
			if gc.stuck {
				t.Fatal("no group was written while the cell held its last rows: planning did not overlap writing")
			}
			if firstTotal != -1 {
				t.Errorf("the first progress report had total %d, want -1 (not known while planning goes on)", firstTotal)
			}
			if sum.Exit != tc.exit || len(sum.Rows) != 1 || sum.Rows[0].Completed != tc.completed {
				t.Errorf("summary %+v, want exit %d and %d completed", sum, tc.exit, tc.completed)
			}
		})
	}
	if got := rootProviders(t, placement); got != 1200 {
		t.Errorf("%d compute node providers, want 1200", got)
	}
}

package migrate_test

import (
	"context"
	"os"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage/celldb"
)

// BenchmarkEmptyRatios100k migrates 100,000 compute nodes with NULL ratios
// on MariaDB: in nova-manage's batches of 50 until complete, and in one
// --max-count batch. Each iteration resets the ratios first (not timed).
func BenchmarkEmptyRatios100k(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench): needs 100k rows in MariaDB")
	}
	ctx := context.Background()
	db := ratioCellDB(b, true, "cell1")
	const n = 100000
	rows := make([]nova.ComputeNode, n)
	for i := range rows {
		rows[i] = ratioNode(int64(i+1), nil, nil, nil)
	}
	if err := celldb.InsertComputeNodes(ctx, db, rows); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name      string
		max       int
		unlimited bool
	}{{"batches-of-50", 0, true}, {"max-count-100000", n, false}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if _, err := db.ExecContext(ctx, "UPDATE compute_nodes SET cpu_allocation_ratio = NULL, ram_allocation_ratio = 0, disk_allocation_ratio = NULL"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				r := &migrate.Runner{Migrations: []migrate.Migration{&migrate.EmptyRatios{Cells: cellStores(db), Ratios: config.DefaultOptions().Ratios}}, Batch: migrate.NovaManageBatch}
				sum, err := r.Run(ctx, bc.max, bc.unlimited)
				if err != nil || sum.Rows[0].Completed != n {
					b.Fatalf("%+v %v", sum, err)
				}
			}
			b.ReportMetric(float64(n), "rows/op")
		})
	}
}

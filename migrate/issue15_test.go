package migrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"

	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
)

// runRpctl runs the binary and returns its exit code, the summary it
// printed with -f json, and standard error.
func runRpctl(t *testing.T, bin string, args ...string) (int, migrate.Summary, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, append(args, "-f", "json")...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	// -f json prints the summary table's rows.
	var sum migrate.Summary
	if err := json.Unmarshal(out.Bytes(), &sum.Rows); err != nil {
		t.Fatalf("rpctl %v: exit %d, no JSON summary: %v\n%s\n%s", args, code, err, out.String(), errOut.String())
	}
	return code, sum, errOut.String()
}

// rootProviders counts migrate.Placement's root providers.
func rootProviders(t *testing.T, db *storage.DB) int {
	t.Helper()
	st, err := placementdb.LoadPlacementState(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range st.Providers {
		if p.ParentUUID == "" {
			n++
		}
		for rc, v := range p.Inventories {
			if v.Total > migrate.PlacementMaxInt || !migrate.CanonicalUUID().MatchString(p.UUID) {
				t.Errorf("provider %s %s %+v: beyond migrate.Placement's limits", p.UUID, rc, v)
			}
		}
	}
	return n
}

// TestIssue15Reproductions are the issue's cases as reported: one
// out-of-range row on MariaDB failed the whole migration on every run with
// the node unnamed and "Completed 0"; on SQLite a 2^31 vcpus and a uuid
// "not-a-uuid" were written as they were.
func TestIssue15Reproductions(t *testing.T) {
	bin := buildRpctl(t)
	type setup struct {
		name      string
		args      func(t *testing.T) ([]string, *storage.DB, *storage.DB)
		col, val  string
		wantField string
	}
	mariadb := func(t *testing.T) ([]string, *storage.DB, *storage.DB) {
		cell, placement, cellM, placeM, _ := sampleCloud(t, samplecloud.Options{Nodes: 80, Seed: 2})
		return []string{"--cell-db", cellM.DSN, "--placement-db", placeM.DSN}, cell, placement
	}
	sqlite := func(t *testing.T) ([]string, *storage.DB, *storage.DB) {
		file := filepath.Join(t.TempDir(), "cloud.db")
		if out, err := exec.Command(bin, "--db", file, "sample-cloud", "--nodes", "80", "--seed", "2").CombinedOutput(); err != nil {
			t.Fatalf("sample-cloud: %v\n%s", err, out)
		}
		dbs, err := storage.Connect(context.Background(), storage.Sources{Embedded: file}, storage.NeedCells|storage.NeedPlacement, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dbs.Close() })
		return []string{"--db", file}, dbs.Cells[0], dbs.Placement
	}
	for _, tc := range []setup{
		{"mariadb pci_stats summing past 2^31-1", mariadb, "pci_stats", `[{"count":2147483647,"dev_type":"type-VF"},{"count":1,"dev_type":"type-VF"}]`, "pci_stats"},
		{"mariadb pci_stats count 2^31", mariadb, "pci_stats", `[{"count":2147483648,"dev_type":"type-VF"}]`, "pci_stats"},
		{"mariadb uuid not-a-uuid", mariadb, "uuid", "not-a-uuid", "uuid"},
		{"sqlite vcpus 2^31", sqlite, "vcpus", "2147483648", "vcpus"},
		{"sqlite uuid not-a-uuid", sqlite, "uuid", "not-a-uuid", "uuid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			args, cell, placement := tc.args(t)
			nodes, err := celldb.ListComputeNodes(ctx, cell, false)
			if err != nil {
				t.Fatal(err)
			}
			victim := nodes[5].ID
			var v any = tc.val
			if n, err := strconv.ParseInt(tc.val, 10, 64); err == nil {
				v = n
			}
			if _, err := cell.ExecContext(ctx, cell.Rebind("UPDATE compute_nodes SET "+tc.col+" = ? WHERE id = ?"), v, victim); err != nil {
				t.Fatal(err)
			}
			migrateArgs := append(append([]string{}, args...), "migrate", "inventory")
			code, sum, stderr := runRpctl(t, bin, migrateArgs...)
			id := "id=" + strconv.FormatInt(victim, 10)
			if code != 2 || !strings.Contains(stderr, id) || !strings.Contains(stderr, tc.wantField+"=") {
				t.Fatalf("exit %d, want 2 with the node (%s) and %s named:\n%s", code, id, tc.wantField, stderr)
			}
			if strings.Contains(stderr, "MySQL error") || strings.Contains(stderr, "failed unexpectedly") {
				t.Errorf("the bad row reached the database:\n%s", stderr)
			}
			// Every other live node's row was written, and the summary
			// says so.
			bad := 0
			for _, n := range nodes {
				if _, err := (&migrate.InventoryConfig{Layout: migrate.LayoutFlat}).PlanNode("", n); err != nil {
					bad++ // the sample cloud's own bad rows, if any
				}
			}
			want := len(nodes) - bad - 1
			if got := rootProviders(t, placement); got != want || sum.Rows[0].Completed != want {
				t.Errorf("%d root providers, Completed %d, want %d", got, sum.Rows[0].Completed, want)
			}
			// The re-run no longer fails as a whole: it names the same row
			// and has nothing else to do.
			code, sum, stderr = runRpctl(t, bin, migrateArgs...)
			if code != 2 || sum.Rows[0].Completed != 0 || !strings.Contains(stderr, id) {
				t.Errorf("re-run: exit %d, Completed %d:\n%s", code, sum.Rows[0].Completed, stderr)
			}
		})
	}
}

// TestKilledConnectionSummary kills the migrate.Placement connections (KILL on
// MariaDB) while the migration writes: the run fails, and the summary's
// Completed is exactly the providers that were written, not fewer (the
// issue saw 4,000 completed for 4,300 written); a re-run completes the rest.
func TestKilledConnectionSummary(t *testing.T) {
	ctx := context.Background()
	cell, placement, _, placeM, _ := sampleCloud(t, samplecloud.Options{Nodes: 1500, Seed: 4, MaxInstancesPerNode: -1})
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutNested, Ratios: config.DefaultOptions().Ratios}
	m := &migrate.Inventory{Cells: cellStores(cell), Placement: placementStore(placement), Config: cfg, Parallel: 2, GroupSize: 10}
	third := make(chan struct{})
	var once sync.Once
	m.Progress = func(done, _ int) {
		if done >= 1500/3 { // the total is not known while planning goes on
			once.Do(func() { close(third) })
		}
	}
	var killed atomic.Int64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		// From a third on, keep killing every connection to the
		// Placement database (from the cell's handle) that is not
		// reading, so that one dies inside a transaction; the run's
		// read-back of what the killed writes left is spared.
		select {
		case <-third:
		case <-stop:
			return
		}
		for {
			var ids []int64
			if err := cell.SelectContext(ctx, &ids, "SELECT id FROM information_schema.processlist WHERE db = ? AND command <> 'Sleep' AND COALESCE(info, '') NOT LIKE 'SELECT%'", placeM.Name); err != nil {
				return
			}
			for _, id := range ids {
				if _, err := cell.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(id, 10)); err == nil {
					killed.Add(1)
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}, Batch: 1000}).Run(ctx, 0, true)
	close(stop)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	if killed.Load() == 0 || len(sum.Errors) == 0 {
		t.Fatalf("%d connections killed, errors %v: the run was not cut short", killed.Load(), sum.Errors)
	}
	written := rootProviders(t, placement)
	t.Logf("%d connections killed; run failed with %v; Completed %d, %d written", killed.Load(), sum.Errors, sum.Rows[0].Completed, written)
	if sum.Rows[0].Completed != written || len(sum.RowErrors) > 0 {
		t.Errorf("Completed %d, but %d compute nodes' providers were written (row errors %v)", sum.Rows[0].Completed, written, sum.RowErrors)
	}
	m2 := &migrate.Inventory{Cells: cellStores(cell), Placement: placementStore(placement), Config: cfg, Parallel: 2}
	sum2, err := (&migrate.Runner{Migrations: []migrate.Migration{m2}}).Run(ctx, 0, true)
	if err != nil || sum2.Exit != 0 {
		t.Fatalf("re-run: exit %d, %v %v %v", sum2.Exit, err, sum2.Errors, sum2.RowErrors)
	}
	if got := rootProviders(t, placement); got != 1500 || got != written+sum2.Rows[0].Completed {
		t.Errorf("re-run: %d providers, want 1500 = %d + %d", got, written, sum2.Rows[0].Completed)
	}
}

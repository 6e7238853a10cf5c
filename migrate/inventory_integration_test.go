package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/novaformats"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// mysqlDB opens a fresh MariaDB database with one schema part.
func mysqlDB(t testing.TB, part schema.Part, role storage.Role, name string) (*storage.DB, *testdb.MySQL) {
	t.Helper()
	m := testdb.NewMySQL(t)
	ctx := context.Background()
	tg, err := dsn.Parse(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, tg, role, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Init(ctx, db, part); err != nil {
		t.Fatal(err)
	}
	return db, m
}

// sampleCloud writes a generated cloud into a fresh cell database and
// returns it with an empty migrate.Placement database.
func sampleCloud(t *testing.T, o samplecloud.Options) (cell, placement *storage.DB, cellM, placeM *testdb.MySQL, cloud *samplecloud.Cloud) {
	t.Helper()
	cell, cellM = mysqlDB(t, schema.PartCell, storage.RoleCell, "cell1")
	placement, placeM = mysqlDB(t, schema.PartPlacement, storage.RolePlacement, "")
	cloud = samplecloud.Generate(o)
	if _, err := samplecloud.Write(context.Background(), samplecloud.Target{Cells: []samplecloud.CellDB{celldb.New(cell)}}, cloud, samplecloud.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return
}

// dumpPlacement renders the migrate.Placement tables by provider name (uuids of
// generated compute node uuids differ between runs), for comparisons.
func dumpPlacement(t *testing.T, db *storage.DB) string {
	t.Helper()
	st, err := placementdb.LoadPlacementState(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	name := func(u string) string {
		if p := st.Providers[u]; p != nil {
			return p.Name
		}
		return u
	}
	var lines []string
	for _, p := range st.Providers {
		l := fmt.Sprintf("%s gen=%d parent=%s root=%s", p.Name, p.Generation, name(p.ParentUUID), name(p.RootUUID))
		for _, rc := range migrate.SortedKeys(p.Inventories) {
			v := p.Inventories[rc]
			l += fmt.Sprintf(" %s=%d/%d/%d/%d/%d/%g", rc, v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio)
		}
		l += " traits=" + strings.Join(migrate.SortedKeys(p.Traits), ",") + " aggs=" + strings.Join(migrate.SortedKeys(p.Aggregates), ",")
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func placementStatus(t *testing.T, url string) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "placement.conf")
	os.WriteFile(conf, []byte("[placement_database]\nconnection = "+url+"\n"), 0o600)
	out, err := exec.Command("/usr/bin/placement-status", "--config-file", conf, "upgrade", "check").CombinedOutput()
	if err != nil || strings.Contains(string(out), "Result: Failure") {
		t.Fatalf("placement-status upgrade check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Missing Root Provider IDs") {
		t.Fatalf("placement-status printed no checks:\n%s", out)
	}
}

func getJSON(t *testing.T, base, path string, v any) {
	t.Helper()
	code, body := testdb.PlacementGet(t, base, path, "1.39")
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// TestInventoryAgainstRealPlacement migrates a sample cloud into MariaDB,
// then asks the real placement-api and placement-status about it, for both
// layouts.
func TestInventoryAgainstRealPlacement(t *testing.T) {
	testdb.RequirePython(t, "placement")
	for _, layout := range []string{migrate.LayoutFlat, migrate.LayoutNested} {
		t.Run(layout, func(t *testing.T) {
			ctx := context.Background()
			cell, placement, _, placeM, cloud := sampleCloud(t, samplecloud.Options{Nodes: 40, Seed: 7, BadRows: 9})
			cfg := migrate.InventoryConfig{Layout: layout, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{CPUs: 1, MemoryMB: 512, DiskMB: 1500},
				SharedStorage: []migrate.SharedPool{{Name: "ceph", Globs: []string{"cmp1-0000*"}}}}
			m := &migrate.Inventory{Cells: cellStores(cell), Placement: placementStore(placement), Config: cfg, Parallel: 2, GroupSize: 7}
			sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}}).Run(ctx, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Exit != 2 || len(sum.RowErrors) != 7 {
				t.Fatalf("exit %d, %d row errors (want 2, 7 bad rows): %v", sum.Exit, len(sum.RowErrors), sum.RowErrors)
			}
			for _, re := range sum.RowErrors {
				if !slices.Contains(cloud.Kinds["bad"], re.ID) || re.Host == "" {
					t.Errorf("row error for a good node or without host: %v", re)
				}
			}
			before := dumpPlacement(t, placement)

			// What the real migrate.Placement says.
			base := testdb.PlacementAPI(t, placeM.URL)
			nodes, err := celldb.ListComputeNodes(ctx, cell, false)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, n := range nodes {
				if slices.Contains(cloud.Kinds["bad"], n.ID) {
					continue
				}
				if n.UUID == nil {
					t.Fatalf("node %d still has no uuid", n.ID)
				}
				p, err := cfg.PlanNode("cell1", n)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range p.Providers {
					var got struct {
						Inventories map[string]inventory.Inventory `json:"inventories"`
					}
					getJSON(t, base, "/resource_providers/"+d.UUID+"/inventories", &got)
					if len(got.Inventories) != len(d.Inventories) {
						t.Errorf("%s: placement has %d inventories, want %d", d.Name, len(got.Inventories), len(d.Inventories))
					}
					for rc, want := range d.Inventories {
						g := got.Inventories[rc]
						wr := cfg.Ratio(want, nil)
						if g.Total != want.Total || g.Reserved != want.Reserved || g.MaxUnit != want.MaxUnit || g.MinUnit != 1 || g.StepSize != 1 || float32(g.AllocationRatio) != float32(wr) {
							t.Errorf("%s %s: placement says %+v, want %+v ratio %v", d.Name, rc, g, want.Inventory, wr)
						}
					}
					checked++
				}
				// Spot checks by hand, independent of PlanNode.
				if layout == migrate.LayoutFlat {
					var got struct {
						Inventories map[string]inventory.Inventory `json:"inventories"`
					}
					getJSON(t, base, "/resource_providers/"+*n.UUID+"/inventories", &got)
					// reserved_host_cpus = 1, except on a host whose cells
					// split cpuset and pcpuset: Nova's
					// _check_cpu_set_configuration makes it 0 there.
					wantRes := int64(1)
					cells, _ := novaformats.ParseNUMATopology(n.NUMATopology)
					for _, c := range cells {
						if c.PCPUs != nil && !slices.Equal(slices.Sorted(slices.Values(c.CPUs)), slices.Sorted(slices.Values(c.PCPUs))) {
							wantRes = 0
						}
					}
					if v := got.Inventories["VCPU"]; v.Total != n.VCPUs || v.Reserved != wantRes {
						t.Errorf("node %d VCPU %+v, want total %d reserved %d", n.ID, v, n.VCPUs, wantRes)
					}
					if v := got.Inventories["MEMORY_MB"]; v.Total != n.MemoryMB || v.Reserved != 512 {
						t.Errorf("node %d MEMORY_MB %+v", n.ID, v)
					}
					if slices.Contains(cloud.Kinds["ratios=zero"], n.ID) && got.Inventories["VCPU"].AllocationRatio != 16 {
						t.Errorf("node %d with 0.0 ratios: VCPU ratio %v, want initial 16.0", n.ID, got.Inventories["VCPU"].AllocationRatio)
					}
					if !strings.HasPrefix(*n.HypervisorHostname, "cmp1-0000") {
						if v := got.Inventories["DISK_GB"]; v.Total != n.LocalGB || v.Reserved != 2 {
							t.Errorf("node %d DISK_GB %+v, want total %d reserved 2 (1500 MB rounded up)", n.ID, v, n.LocalGB)
						}
					}
				}
			}
			if checked < 30 {
				t.Fatalf("checked only %d providers", checked)
			}
			var cands struct {
				AllocationRequests []json.RawMessage `json:"allocation_requests"`
			}
			getJSON(t, base, "/allocation_candidates?resources=VCPU:1", &cands)
			if len(cands.AllocationRequests) == 0 {
				t.Fatal("GET /allocation_candidates?resources=VCPU:1 returned no candidates")
			}
			getJSON(t, base, "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:10", &cands)
			if len(cands.AllocationRequests) == 0 {
				t.Fatal("no candidates for VCPU+MEMORY_MB+DISK_GB")
			}
			var sharing struct {
				ResourceProviders []struct {
					UUID string `json:"uuid"`
				} `json:"resource_providers"`
			}
			getJSON(t, base, "/resource_providers?required=MISC_SHARES_VIA_AGGREGATE", &sharing)
			if len(sharing.ResourceProviders) != 1 || sharing.ResourceProviders[0].UUID != migrate.SharedProviderUUID("ceph") {
				t.Errorf("sharing providers: %+v", sharing)
			}
			if layout == migrate.LayoutNested {
				var numa struct {
					ResourceProviders []json.RawMessage `json:"resource_providers"`
				}
				getJSON(t, base, "/resource_providers?required=HW_NUMA_ROOT", &numa)
				if len(numa.ResourceProviders) == 0 {
					t.Error("no HW_NUMA_ROOT providers in the nested layout")
				}
			}
			placementStatus(t, placeM.URL)

			// A re-run changes nothing.
			m2 := &migrate.Inventory{Cells: cellStores(cell), Placement: placementStore(placement), Config: cfg, Parallel: 2}
			if _, err := (&migrate.Runner{Migrations: []migrate.Migration{m2}}).Run(ctx, 0, true); err != nil {
				t.Fatal(err)
			}
			if m2.Pending() != 7 {
				t.Errorf("re-run found %d nodes to migrate, want only the 7 bad rows", m2.Pending())
			}
			if after := dumpPlacement(t, placement); after != before {
				t.Errorf("re-run changed Placement")
			}
		})
	}
}

// buildRpctl builds the command for tests that run it as a process.
func buildRpctl(t *testing.T) string { return testdb.BuildRpctl(t) }

// TestInventoryCrashConverges kills the migration with SIGKILL at random
// moments, re-runs it, and compares the migrate.Placement tables with a clean run's.
func TestInventoryCrashConverges(t *testing.T) {
	bin := testdb.BuildRpctl(t)
	o := samplecloud.Options{Nodes: 400, Cells: 1, Seed: 3}
	args := func(cellM, placeM *testdb.MySQL) []string {
		return []string{"--cell-db", cellM.DSN, "--placement-db", placeM.DSN, "migrate", "inventory", "--layout", "nested", "--shared-storage", "pool=cmp1-000*"}
	}
	_, cleanP, cellA, placeA, _ := sampleCloud(t, o)
	start := time.Now()
	if out, err := exec.Command(bin, args(cellA, placeA)...).CombinedOutput(); err != nil {
		t.Fatalf("clean run: %v\n%s", err, out)
	}
	full := time.Since(start)
	want := dumpPlacement(t, cleanP)

	_, crashP, cellB, placeB, _ := sampleCloud(t, o)
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for i := 0; i < 8; i++ {
		cmd := exec.Command(bin, args(cellB, placeB)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(full))))
		if cmd.Process.Signal(syscall.SIGKILL) == nil {
			kills++
		}
		cmd.Wait()
	}
	if out, err := exec.Command(bin, args(cellB, placeB)...).CombinedOutput(); err != nil {
		t.Fatalf("re-run after %d kills: %v\n%s", kills, err, out)
	}
	got := dumpPlacement(t, crashP)
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		t.Errorf("after %d SIGKILLs and a re-run, migrate.Placement differs from a clean run (%d vs %d providers)", kills, len(gl), len(wl))
		for _, l := range gl {
			if !slices.Contains(wl, l) {
				t.Logf("only after crash: %s", l)
				break
			}
		}
	}
	t.Logf("clean run %v; %d kills at random points, then a re-run converged", full.Round(time.Millisecond), kills)
}

// TestRatioSurvivesRerun: a ratio changed through the real placement-api
// survives `rpctl migrate all` when no override is configured, and is
// replaced when one is.
func TestRatioSurvivesRerun(t *testing.T) {
	testdb.RequirePython(t, "placement")
	bin := testdb.BuildRpctl(t)
	_, placement, cellM, placeM, _ := sampleCloud(t, samplecloud.Options{Nodes: 5, Seed: 11})
	run := func(extra ...string) {
		t.Helper()
		a := append([]string{"--cell-db", cellM.DSN, "--placement-db", placeM.DSN, "migrate", "all"}, extra...)
		if out, err := exec.Command(bin, a...).CombinedOutput(); err != nil {
			t.Fatalf("rpctl %v: %v\n%s", extra, err, out)
		}
	}
	run()
	st, err := placementdb.LoadPlacementState(context.Background(), placement)
	if err != nil {
		t.Fatal(err)
	}
	var rp *migrate.PProvider
	for _, p := range st.Providers {
		rp = p
		break
	}
	base := testdb.PlacementAPI(t, placeM.URL)
	vcpu := rp.Inventories["VCPU"]
	put := func(ratio string) {
		t.Helper()
		var p struct {
			Generation int64 `json:"resource_provider_generation"`
		}
		getJSON(t, base, "/resource_providers/"+rp.UUID+"/inventories", &p)
		body := fmt.Sprintf(`{"resource_provider_generation": %d, "total": %d, "reserved": %d, "min_unit": 1, "max_unit": %d, "step_size": 1, "allocation_ratio": %s}`,
			p.Generation, vcpu.Total, vcpu.Reserved, vcpu.MaxUnit, ratio)
		if code, b := testdb.PlacementDo(t, "PUT", base, "/resource_providers/"+rp.UUID+"/inventories/VCPU", "1.39", body); code != 200 {
			t.Fatalf("PUT inventory (allocation_ratio %s): %d %s", ratio, code, b)
		}
	}
	ratio := func() float64 {
		var got inventory.Inventory
		getJSON(t, base, "/resource_providers/"+rp.UUID+"/inventories/VCPU", &got)
		return got.AllocationRatio
	}
	put("3.0")
	run()
	if r := ratio(); r != 3.0 {
		t.Fatalf("after re-run without override: VCPU ratio %v, want the API-set 3.0", r)
	}
	// Issue 37 row 4: placement-api stores a 0 ratio (its schema has no
	// minimum; capacity 0 is allowed from 1.26); the migration then writes
	// the compute_nodes row's ratio (what a first run wrote) instead of
	// refusing the node on every run.
	put("0.0")
	if r := ratio(); r != 0 {
		t.Fatalf("placement-api stored allocation_ratio %v, want the 0 it was sent", r)
	}
	run()
	if r := ratio(); r != vcpu.AllocationRatio {
		t.Fatalf("after a re-run over an API-set 0 ratio: VCPU ratio %v, want the row's %v", r, vcpu.AllocationRatio)
	}
	run("--cpu-allocation-ratio", "4.0")
	if r := ratio(); r != 4.0 {
		t.Fatalf("after re-run with --cpu-allocation-ratio 4.0: VCPU ratio %v, want 4.0", r)
	}
}

// TestSharedPoolSwitchConverges (issue 37 row 2): a flat cloud switched to
// --shared-storage by `migrate all` ends the same way every time — two
// clean runs agree, and a run killed with SIGKILL after N nodes joined the
// pool, then run again, ends as a clean run, generations and allocations
// included — on MariaDB (several writers) and SQLite. The pool is too
// small for every matching host, so which nodes get in is the question.
// The kills are driven by progress: the pool's member count, read from
// the database.
func TestSharedPoolSwitchConverges(t *testing.T) {
	bin := buildRpctl(t)
	ctx := context.Background()
	const seed, nodes = "3", "300"
	shared := []string{"migrate", "all", "--shared-storage", "pool1=cmp1-0*"}
	type cloud struct {
		flags []string
		db    *storage.DB // opened once the cloud is written
		open  func() *storage.DB
	}
	backends := []struct {
		name string
		make func(t *testing.T) *cloud
	}{
		{"sqlite", func(t *testing.T) *cloud {
			path := filepath.Join(t.TempDir(), "cloud.db")
			return &cloud{flags: []string{"--db", path}, open: func() *storage.DB {
				dbs, err := storage.Connect(ctx, storage.Sources{Embedded: path}, storage.NeedPlacement, 0)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { dbs.Close() })
				return dbs.Placement
			}}
		}},
		{"mariadb", func(t *testing.T) *cloud {
			_, cellM := mysqlDB(t, schema.PartCell, storage.RoleCell, "cell1")
			_, apiM := mysqlDB(t, schema.PartAPI, storage.RoleAPI, "")
			place, placeM := mysqlDB(t, schema.PartPlacement, storage.RolePlacement, "")
			return &cloud{flags: []string{"--cell-db", cellM.DSN, "--api-db", apiM.DSN, "--placement-db", placeM.DSN}, open: func() *storage.DB { return place }}
		}},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			rpctl := func(c *cloud, args ...string) (string, int) {
				t.Helper()
				out, err := exec.Command(bin, append(append([]string{}, c.flags...), args...)...).CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				return string(out), code
			}
			// A flat cloud with its allocations healed.
			flat := func() *cloud {
				c := be.make(t)
				if out, code := rpctl(c, "sample-cloud", "--nodes", nodes, "--seed", seed); code != 0 {
					t.Fatalf("sample-cloud: %d %s", code, out)
				}
				if out, code := rpctl(c, "migrate", "all"); code != 0 {
					t.Fatalf("flat migrate all: %d %s", code, out)
				}
				c.db = c.open()
				return c
			}
			dump := func(c *cloud) string {
				t.Helper()
				var rows []struct {
					Consumer, Provider, Class string
					Used, Generation          int64
				}
				if err := c.db.SelectContext(ctx, &rows, `SELECT a.consumer_id AS consumer, r.name AS provider, rc.name AS class, a.used AS used, c.generation AS generation
					FROM allocations a JOIN resource_providers r ON r.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id
					JOIN consumers c ON c.uuid = a.consumer_id`); err != nil {
					t.Fatal(err)
				}
				var allocs []string
				for _, r := range rows {
					allocs = append(allocs, fmt.Sprintf("%s %s %s %d gen=%d", r.Consumer, r.Provider, r.Class, r.Used, r.Generation))
				}
				sort.Strings(allocs)
				return dumpPlacement(t, c.db) + "\n" + strings.Join(allocs, "\n")
			}
			members := func(c *cloud) int {
				var n int
				if err := c.db.GetContext(ctx, &n, c.db.Rebind(`SELECT COUNT(*) FROM resource_provider_aggregates ra
					JOIN placement_aggregates a ON a.id = ra.aggregate_id WHERE a.uuid = ?`), migrate.SharedAggregateUUID("pool1")); err != nil {
					return -1 // SQLite busy with the writer: asked again
				}
				return n
			}
			a := flat()
			if out, code := rpctl(a, shared...); code != 2 || !strings.Contains(out, "no provider of the new layout has room") {
				t.Fatalf("clean run: exit %d, want 2 with nodes refused for room:\n%s", code, out)
			}
			want, in := dump(a), members(a)
			b := flat()
			if _, code := rpctl(b, shared...); code != 2 {
				t.Fatalf("second clean run: exit %d", code)
			}
			if got := dump(b); got != want {
				t.Fatalf("two clean runs differ: %s", firstDiff(got, want))
			}
			for _, n := range []int{in / 3, 2 * in / 3} {
				c := flat()
				cmd := exec.Command(bin, append(append([]string{}, c.flags...), shared...)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan struct{})
				go func() { cmd.Wait(); close(exited) }()
				killedAt := -1
			poll:
				for {
					select {
					case <-exited:
						break poll
					default:
					}
					if m := members(c); m >= n {
						cmd.Process.Signal(syscall.SIGKILL)
						killedAt = m
						<-exited
						break poll
					}
					time.Sleep(2 * time.Millisecond) // how often to look, not when to kill
				}
				if out, code := rpctl(c, shared...); code != 2 {
					t.Fatalf("re-run after a kill at %d members: exit %d\n%s", killedAt, code, out)
				}
				if got := dump(c); got != want {
					t.Errorf("killed at %d of %d members, then re-run: differs from a clean run: %s", killedAt, in, firstDiff(got, want))
				}
				t.Logf("killed at %d of %d pool members (-1: it ended first); the re-run ends as a clean run", killedAt, in)
			}
		})
	}
}

// firstDiff names the first line two dumps disagree on.
func firstDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			return "only in the run: " + l
		}
	}
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			return "only in the clean run: " + l
		}
	}
	return "same lines, other order"
}

package samplecloud_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/novaformats"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/schema"
	"github.com/rpctl/rpctl/storage/stores"
)

func TestGenerateDeterministic(t *testing.T) {
	for _, o := range []samplecloud.Options{
		{Seed: 1},
		{Seed: 42, Nodes: 120, Cells: 3, BadRows: 9},
	} {
		a, b := samplecloud.Generate(o), samplecloud.Generate(o)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%+v: two runs differ", o)
		}
	}
	a, b := samplecloud.Generate(samplecloud.Options{Seed: 1}), samplecloud.Generate(samplecloud.Options{Seed: 2})
	if reflect.DeepEqual(a.Cells[0].ComputeNodes, b.Cells[0].ComputeNodes) {
		t.Error("seeds 1 and 2 gave the same nodes")
	}
}

func allNodes(c *samplecloud.Cloud) []nova.ComputeNode {
	var out []nova.ComputeNode
	for _, cell := range c.Cells {
		out = append(out, cell.ComputeNodes...)
	}
	return out
}

func TestEveryFormatAtDefaultSize(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 99} {
		c := samplecloud.Generate(samplecloud.Options{Seed: seed})
		var want []string
		for _, f := range samplecloud.PCIFormats {
			want = append(want, "pci_stats="+f)
		}
		for _, f := range samplecloud.NUMAFormats {
			want = append(want, "numa_topology="+f)
		}
		for _, f := range samplecloud.ExtraFormats {
			want = append(want, "extra_resources="+f)
		}
		for _, k := range samplecloud.RatioKinds {
			want = append(want, "ratios="+k)
		}
		want = append(want, "uuid=null", "uuid=set", "deleted")
		for _, k := range want {
			if len(c.Kinds[k]) == 0 {
				t.Errorf("seed %d: no node with %s", seed, k)
			}
		}
		if len(c.Kinds["migration:resize"])+len(c.Kinds["migration:live-migration"]) == 0 {
			t.Errorf("seed %d: no in-progress migration", seed)
		}
	}
}

func TestValidByDefault(t *testing.T) {
	c := samplecloud.Generate(samplecloud.Options{Seed: 7, Nodes: 300, Cells: 2})
	if len(c.Kinds["bad"]) != 0 {
		t.Fatalf("bad rows without BadRows: %v", c.Kinds["bad"])
	}
	_, computes, err := samplecloud.ServiceVersions(release.Default)
	if err != nil {
		t.Fatal(err)
	}
	live, hosts := 0, map[string]bool{}
	services := map[int64]nova.Service{}
	for _, cell := range c.Cells {
		for _, s := range cell.Services {
			services[s.ID] = s
			if s.Deleted == 0 && *s.Binary == "nova-compute" && s.Version < slices.Min(computes) {
				t.Errorf("service %d: version %d is older than N-1", s.ID, s.Version)
			}
		}
		for _, n := range cell.ComputeNodes {
			if n.IsDeleted() {
				if n.Deleted != n.ID || n.DeletedAt == nil {
					t.Errorf("node %d: soft delete must set deleted = id and deleted_at", n.ID)
				}
				continue
			}
			live++
			if hosts[*n.Host] {
				t.Errorf("node %d: host %s is not unique", n.ID, *n.Host)
			}
			hosts[*n.Host] = true
			s, ok := services[*n.ServiceID]
			if !ok || *s.Host != *n.Host || s.Deleted != 0 {
				t.Errorf("node %d: no live nova-compute service for %s", n.ID, *n.Host)
			}
			if n.VCPUsUsed > n.VCPUs || n.MemoryMBUsed > n.MemoryMB || n.LocalGBUsed > n.LocalGB || n.VCPUs <= 0 {
				t.Errorf("node %d: usage over capacity", n.ID)
			}
			for _, r := range []*float64{n.CPUAllocationRatio, n.RAMAllocationRatio, n.DiskAllocationRatio} {
				if r != nil && *r != 0 && *r < 1 {
					t.Errorf("node %d: ratio %v below 1", n.ID, *r)
				}
			}
			// Every blob must be readable by the migration's parsers.
			if _, err := novaformats.ParsePCIStats(n.PCIStats); err != nil {
				t.Errorf("node %d: %v", n.ID, err)
			}
			cells, err := novaformats.ParseNUMATopology(n.NUMATopology)
			if err != nil {
				t.Errorf("node %d: %v", n.ID, err)
			}
			var cpus int
			for _, nc := range cells {
				cpus += len(nc.CPUs) + len(nc.PCPUs)
			}
			if n.NUMATopology != nil && int64(cpus) != n.VCPUs {
				t.Errorf("node %d: NUMA cells hold %d CPUs, vcpus is %d", n.ID, cpus, n.VCPUs)
			}
			if _, err := novaformats.ParseExtraResources(n.ExtraResources); err != nil {
				t.Errorf("node %d: %v", n.ID, err)
			}
		}
	}
	if live != 300 {
		t.Errorf("%d live nodes, want 300", live)
	}
}

func TestBadRows(t *testing.T) {
	c := samplecloud.Generate(samplecloud.Options{Seed: 3, Nodes: 20, BadRows: len(samplecloud.BadKinds)})
	for _, k := range samplecloud.BadKinds {
		if len(c.Kinds["bad="+k]) != 1 {
			t.Errorf("bad=%s: %v", k, c.Kinds["bad="+k])
		}
	}
	byID := map[int64]nova.ComputeNode{}
	for _, n := range allNodes(c) {
		byID[n.ID] = n
	}
	for _, k := range []string{"unparsable-pci-stats", "unknown-pci-format"} {
		if _, err := novaformats.ParsePCIStats(byID[c.Kinds["bad="+k][0]].PCIStats); err == nil {
			t.Errorf("%s: parses", k)
		}
	}
	for _, k := range []string{"unparsable-numa-topology", "unknown-numa-format"} {
		if _, err := novaformats.ParseNUMATopology(byID[c.Kinds["bad="+k][0]].NUMATopology); err == nil {
			t.Errorf("%s: parses", k)
		}
	}
	if n := byID[c.Kinds["bad=negative-totals"][0]]; n.VCPUs >= 0 {
		t.Errorf("negative-totals: vcpus %d", n.VCPUs)
	}
	// Bad rows do not disturb the valid ones: same seed, same valid cloud.
	clean := samplecloud.Generate(samplecloud.Options{Seed: 3, Nodes: 20})
	if !reflect.DeepEqual(clean.Cells[0].ComputeNodes, c.Cells[0].ComputeNodes[:len(clean.Cells[0].ComputeNodes)]) {
		t.Error("--bad-rows changed the valid rows")
	}
}

// TestFormatsMatchNovaFixtures compares the shape (keys at every level,
// object names and versions) of each generated format with the fixture Nova
// itself produced, in testdata/compute_nodes.
func TestFormatsMatchNovaFixtures(t *testing.T) {
	c := samplecloud.Generate(samplecloud.Options{Seed: 1})
	byID := map[int64]nova.ComputeNode{}
	for _, n := range allNodes(c) {
		byID[n.ID] = n
	}
	fixtures := map[string]string{
		"pci_stats=" + samplecloud.PCIOvo:         "pci_stats.ovo-1.1.json",
		"pci_stats=" + samplecloud.PCIOvoEmpty:    "pci_stats.ovo-1.1-empty.json",
		"pci_stats=" + samplecloud.PCILegacyList:  "pci_stats.legacy-list.json",
		"pci_stats=" + samplecloud.PCILegacyDict:  "pci_stats.legacy-dict.json",
		"pci_stats=" + samplecloud.PCILegacyNone:  "pci_stats.legacy-list-empty.json",
		"numa_topology=" + samplecloud.NUMACell15: "numa_topology.ovo-cell-1.5.json",
		"numa_topology=" + samplecloud.NUMACell14: "numa_topology.ovo-cell-1.4.json",
		"numa_topology=" + samplecloud.NUMACell13: "numa_topology.ovo-cell-1.3.json",
		"numa_topology=" + samplecloud.NUMACell12: "numa_topology.ovo-cell-1.2.json",
		"numa_topology=" + samplecloud.NUMALegacy: "numa_topology.legacy.json",
	}
	for kind, file := range fixtures {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "compute_nodes", file))
		if err != nil {
			t.Fatal(err)
		}
		n := byID[c.Kinds[kind][0]]
		col := n.PCIStats
		if strings.HasPrefix(kind, "numa") {
			col = n.NUMATopology
		}
		if got, want := shape(t, *col), shape(t, string(b)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s (node %d) differs from %s:\n got %v\nwant %v", kind, n.ID, file, got, want)
		}
	}
}

// shape flattens JSON into sorted "path" strings: keys, with the values of
// nova_object.name/version, ignoring list lengths, other values and
// nova_object.changes (whose order Nova does not keep).
func shape(t *testing.T, s string) []string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	var walk func(string, any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch {
				case k == "nova_object.changes":
				case k == "nova_object.name" || k == "nova_object.version":
					set[p+"/"+k+"="+e.(string)] = true
				case strings.HasSuffix(p, "/tags") || (p == "" || p == "[]") && !strings.HasPrefix(k, "nova_object") && k != "cells":
					// Legacy pci tags and pool keys vary with the devices.
					set[p+"/<key>"] = true
				default:
					walk(p+"/"+k, e)
				}
			}
		case []any:
			set[p+"[]"] = true
			for _, e := range x {
				walk(p+"[]", e)
			}
		default:
			set[p] = true
		}
	}
	walk("", v)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func openEmbedded(t *testing.T, path string) *storage.Databases {
	t.Helper()
	dbs, err := storage.Connect(context.Background(), storage.Sources{Embedded: path}, storage.NeedCells, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbs.Close() })
	if _, err := schema.Init(context.Background(), dbs.Cells[0], schema.PartCell, schema.PartAPI, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	return dbs
}

func TestWriteRoundTripSQLite(t *testing.T) {
	ctx := context.Background()
	dbs := openEmbedded(t, filepath.Join(t.TempDir(), "rpctl.db"))
	c := samplecloud.Generate(samplecloud.Options{Seed: 5, Nodes: 40, Cells: 2, BadRows: 3})
	sum, err := samplecloud.Write(ctx, stores.SampleTarget(dbs), c, samplecloud.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := celldb.ListComputeNodes(ctx, dbs.Cells[0], true)
	if err != nil {
		t.Fatal(err)
	}
	want := allNodes(c)
	sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
	if len(got) != len(want) {
		t.Fatalf("read %d nodes, wrote %d", len(got), len(want))
	}
	for i := range want {
		w := want[i]
		if !w.IsDeleted() {
			one := int64(1)
			w.Mapped = &one // every live host was mapped
		}
		if !reflect.DeepEqual(got[i], w) {
			t.Fatalf("node %d:\n got %+v\nwant %+v", w.ID, got[i], w)
		}
	}
	if sum.Cells[0].ComputeNodes != 40 || sum.Cells[0].Bad != 3 || sum.CellMappings != 2 {
		t.Errorf("summary %+v", sum)
	}
	cells, err := apidb.ListCellMappings(ctx, dbs.API)
	if err != nil || len(cells) != 2 || cells[0].UUID != nova.Cell0UUID || cells[1].Name != storage.EmbeddedCellName {
		t.Errorf("cell mappings %+v, %v", cells, err)
	}

	// A second write is refused, and --force replaces.
	if _, err := samplecloud.Write(ctx, stores.SampleTarget(dbs), c, samplecloud.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "already has") {
		t.Fatalf("second write: %v", err)
	}
	c2 := samplecloud.Generate(samplecloud.Options{Seed: 6, Nodes: 10})
	if _, err := samplecloud.Write(ctx, stores.SampleTarget(dbs), c2, samplecloud.WriteOptions{Force: true}); err != nil {
		t.Fatalf("forced write: %v", err)
	}
	if n, _ := celldb.CountComputeNodes(ctx, dbs.Cells[0], false); n != 10 {
		t.Errorf("after --force: %d live nodes, want 10", n)
	}
}

// TestWriteIntoNovaDBSync writes into databases made by Nova's own db sync.
func TestWriteIntoNovaDBSync(t *testing.T) {
	cell, api, placement := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	testdb.RequirePython(t, "nova.cmd.manage", "placement", "pymysql")
	prefix := strings.TrimSuffix(cell.URL, "/"+cell.Name+"?charset=utf8")
	if out, err := runScript("reference-dbsync.sh", prefix, cell.Name, api.Name, placement.Name); err != nil {
		t.Fatalf("reference db sync: %v\n%s", err, out)
	}
	ctx := context.Background()
	dbs, err := storage.Connect(ctx, storage.Sources{
		CellDBs: []storage.Source{{URL: cell.URL, Origin: "test"}},
		APIDB:   storage.Source{URL: api.URL, Origin: "test"},
	}, storage.NeedCells|storage.NeedAPI, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dbs.Close()
	c := samplecloud.Generate(samplecloud.Options{Seed: 11, Nodes: 60, BadRows: len(samplecloud.BadKinds)})
	if _, err := samplecloud.Write(ctx, stores.SampleTarget(dbs), c, samplecloud.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := celldb.ListComputeNodes(ctx, dbs.Cells[0], true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(allNodes(c)) {
		t.Fatalf("read %d nodes, wrote %d", len(got), len(allNodes(c)))
	}
	// The cell mapping written must lead back to the same cell database.
	again, err := storage.Connect(ctx, storage.Sources{APIDB: storage.Source{URL: api.URL, Origin: "test"}, CellMappings: apidb.ListCellMappings}, storage.NeedCells, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if len(again.Cells) != 1 || again.Cells[0].Target.Database != cell.Name {
		t.Fatalf("cells via cell_mappings: %+v", again.Cells)
	}
}

func runScript(name string, args ...string) ([]byte, error) {
	return exec.Command(filepath.Join(testdb.RepoRoot(), "scripts", name), args...).CombinedOutput()
}

// BenchmarkWrite100k writes 100,000 compute nodes (with their services, no
// instances) to MariaDB. Needs RPCTL_BENCH (make bench).
func BenchmarkWrite100k(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench) to write 100,000 nodes into MariaDB")
	}
	// Only samplecloud.Write is timed, not generating the cloud.
	b.StopTimer()
	c := samplecloud.Generate(samplecloud.Options{Seed: 1, Nodes: 100000, Cells: 1, MaxInstancesPerNode: -1})
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		m := testdb.NewMySQL(b)
		tg, err := dsn.Parse(m.DSN)
		if err != nil {
			b.Fatal(err)
		}
		db, err := storage.Open(ctx, tg, storage.RoleCell, "cell1")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := schema.Init(ctx, db, schema.PartCell); err != nil {
			b.Fatal(err)
		}
		dbs := &storage.Databases{Cells: []*storage.DB{db}}
		b.StartTimer()
		if _, err := samplecloud.Write(ctx, stores.SampleTarget(dbs), c, samplecloud.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		start := time.Now()
		nodes, err := celldb.ListComputeNodes(ctx, db, true)
		if err != nil || len(nodes) != len(c.Cells[0].ComputeNodes) {
			b.Fatalf("read back %d nodes: %v", len(nodes), err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "list-s")
		db.Close()
	}
}

// TestRowShapeByRelease: with --release 2025.1 every placed instance has
// the compute_id of the live node of its host and node and every migration
// its destination node's dest_compute_id (Nova 31's resource tracker);
// Zed's rows have neither; the rest of the cloud is the same for a seed.
func TestRowShapeByRelease(t *testing.T) {
	zed := samplecloud.Generate(samplecloud.Options{Nodes: 40, Seed: 3})
	r25, err := samplecloud.GenerateContext(context.Background(), samplecloud.Options{Nodes: 40, Seed: 3, Release: release.R2025_1})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[[2]string]int64{}
	for _, n := range r25.Cells[0].ComputeNodes {
		if !n.IsDeleted() && n.Host != nil && n.HypervisorHostname != nil {
			ids[[2]string{*n.Host, *n.HypervisorHostname}] = n.ID
		}
	}
	if len(r25.Cells[0].Instances) == 0 || len(r25.Cells[0].Migrations) == 0 {
		t.Fatal("no instances or migrations to check")
	}
	for i, in := range r25.Cells[0].Instances {
		if in.ComputeID == nil || *in.ComputeID != ids[[2]string{*in.Host, *in.Node}] {
			t.Errorf("instance %d on %s/%s: compute_id %v", in.ID, *in.Host, *in.Node, in.ComputeID)
		}
		z := zed.Cells[0].Instances[i]
		if z.ComputeID != nil {
			t.Errorf("zed instance %d has a compute_id", z.ID)
		}
		z.ComputeID = in.ComputeID
		if !reflect.DeepEqual(z, in) {
			t.Errorf("instance %d differs between releases beyond compute_id", in.ID)
		}
	}
	for _, m := range r25.Cells[0].Migrations {
		if m.DestComputeID == nil || *m.DestComputeID != ids[[2]string{m.DestCompute, m.DestNode}] {
			t.Errorf("migration %d to %s/%s: dest_compute_id %v", m.ID, m.DestCompute, m.DestNode, m.DestComputeID)
		}
	}
	for _, m := range zed.Cells[0].Migrations {
		if m.DestComputeID != nil {
			t.Errorf("zed migration %d has a dest_compute_id", m.ID)
		}
	}
	if _, err := samplecloud.GenerateContext(context.Background(), samplecloud.Options{Nodes: 1, Release: "2025.2"}); err == nil {
		t.Error("a release without row shapes: no error")
	}
	// The releases known by rules only: compute_id from Nova 28 (2023.2) on,
	// where each tag's resource_tracker.py sets it (none in 27.0.0).
	for rel, want := range map[release.Name]bool{release.Zed: false, release.R2023_1: false, release.R2023_2: true,
		release.R2024_1: true, release.R2024_2: true, release.R2025_1: true} {
		got, err := samplecloud.RowShapeOf(rel)
		if err != nil || got.ComputeIDs != want {
			t.Errorf("RowShapeOf(%s) = %+v, %v; want ComputeIDs %v", rel, got, err, want)
		}
	}
}

// TestServiceVersionsByRelease (issue 33): a release's sample cloud runs
// its control services at that release's SERVICE_VERSION and its computes
// from there down to the oldest its control plane supports
// (OLDEST_SUPPORTED_SERVICE_VERSION's alias), read from each Nova:
// Nova 26.2.2 nova/objects/service.py:34 SERVICE_VERSION = 64, :233
// 'Yoga', :238 'Yoga': 61; Nova 31.0.0 :34 68, :262 'Caracal', :271
// 'Caracal': 66. So "Older than N-1 computes" passes at its edge (the
// oldest compute is at the threshold, none below) and the release
// detected from the services is the one named. Zed's spread is the one
// sample clouds always had, so a seed's Zed cloud is unchanged.
func TestServiceVersionsByRelease(t *testing.T) {
	for _, tc := range []struct {
		rel      release.Name
		control  int64
		computes []int64 // the distinct versions the computes report
	}{
		{"", 64, []int64{61, 62, 63, 64}},
		{release.Zed, 64, []int64{61, 62, 63, 64}},
		{release.R2025_1, 68, []int64{66, 67, 68}},
	} {
		t.Run(string(tc.rel), func(t *testing.T) {
			c, err := samplecloud.GenerateContext(context.Background(), samplecloud.Options{Nodes: 300, Cells: 2, Seed: 7, Release: tc.rel})
			if err != nil {
				t.Fatal(err)
			}
			control, computes := map[int64]bool{}, map[int64]bool{}
			for _, cell := range c.Cells {
				for _, s := range cell.Services {
					switch {
					case s.Deleted != 0:
					case *s.Binary == "nova-compute":
						computes[s.Version] = true
					default:
						control[s.Version] = true
					}
				}
			}
			if got := slices.Sorted(maps.Keys(control)); !slices.Equal(got, []int64{tc.control}) {
				t.Errorf("control services at %v, want %d", got, tc.control)
			}
			if got := slices.Sorted(maps.Keys(computes)); !slices.Equal(got, tc.computes) {
				t.Errorf("computes at %v, want %v", got, tc.computes)
			}
		})
	}
	_, zed, err := samplecloud.ServiceVersions(release.Zed)
	if err != nil || !slices.Equal(zed, []int64{64, 64, 64, 63, 62, 61}) {
		t.Errorf("Zed's spread %v (%v): the seeds' Zed clouds would change", zed, err)
	}
	// Every release rpctl knows has versions, from status's tables.
	for _, rel := range release.Names() {
		control, computes, err := samplecloud.ServiceVersions(rel)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		oldest := status.Releases[rel].OldestComputeVersion
		if control != status.ServiceVersionOf(rel) || len(computes) != 6 || slices.Max(computes) != control || slices.Min(computes) != oldest {
			t.Errorf("%s: control %d, computes %v; want control %d, computes from it down to %d, six of them", rel, control, computes, status.ServiceVersionOf(rel), oldest)
		}
	}
	if _, _, err := samplecloud.ServiceVersions("1999.1"); err == nil {
		t.Error("a release without service versions: no error")
	}
}

package claims_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// benchNUMA gives the nested layout two NUMA cells of 64 CPUs and 512 GiB.
const benchNUMA = `{"cells": [{"id": 0, "cpus": "0-63", "mem": {"total": 524288}}, {"id": 1, "cpus": "64-127", "mem": {"total": 524288}}]}`

// benchHealRowsLayout is a cloud of instances that all miss their
// allocations: perNode instances on each of nodes compute nodes, big
// enough for them. For the "nested" layout the nodes have a NUMA topology;
// for "shared" a disk the size of the pool every instance's DISK_GB then
// goes to.
func benchHealRowsLayout(nodes, perNode int, layout string) ([]nova.ComputeNode, []nova.Instance) {
	created := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	flavor := healFlavor("m1.small", 1, 512, 10, 0, 0, nil)
	var ns []nova.ComputeNode
	var is []nova.Instance
	for n := 1; n <= nodes; n++ {
		host := fmt.Sprintf("compute%06d", n)
		u := fmt.Sprintf("c%07d-0000-4000-8000-%012d", n, n)
		ns = append(ns, nova.ComputeNode{ID: int64(n), Host: &host, HypervisorHostname: &host, UUID: &u, CreatedAt: &created,
			VCPUs: 128, MemoryMB: 1 << 20, LocalGB: 100000, HypervisorType: "QEMU", HypervisorVersion: 6002000, CPUInfo: "{}",
			CPUAllocationRatio: cmdtest.RatiosFP(4), RAMAllocationRatio: cmdtest.RatiosFP(1), DiskAllocationRatio: cmdtest.RatiosFP(1)})
		switch layout {
		case "nested":
			ns[len(ns)-1].NUMATopology = ptrS(benchNUMA)
		case "shared":
			ns[len(ns)-1].LocalGB = int64(nodes*perNode) * 10
		}
		for k := 0; k < perNode; k++ {
			i := len(is) + 1
			t := created.Add(time.Duration(i) * time.Second)
			is = append(is, nova.Instance{ID: int64(i), UUID: healUUID('a', i), CreatedAt: &t, UserID: healUser, ProjectID: healProject,
				ImageRef: "155d900f-4e14-4e4c-a73d-069cbf4541e6", Hostname: fmt.Sprintf("vm%d", i), DisplayName: fmt.Sprintf("vm%d", i),
				Host: &host, Node: &host, VMState: "active", PowerState: 1, Flavor: &flavor, PCIRequests: ptrS("[]"),
				VCPUs: 1, MemoryMB: 512, RootGB: 10})
		}
	}
	return ns, is
}

// benchHealCloud writes the rows into Nova's own schemas (reference db
// sync), maps the cell and the instances, and creates the providers with
// Rpctl migrate inventory.
func benchHealCloud(b *testing.B, nodes, perNode int) *cmdtest.HealSide {
	return benchHealCloudLayout(b, nodes, perNode, "")
}

// benchHealCloudLayout is benchHealCloud with the providers of a layout
// ("", "nested" or "shared").
func benchHealCloudLayout(b *testing.B, nodes, perNode int, layout string) *cmdtest.HealSide {
	b.Helper()
	s := cmdtest.ReferenceSide(b)
	ctx := context.Background()
	ns, is := benchHealRowsLayout(nodes, perNode, layout)
	cell := cmdtest.OpenDB(b, s.Cell, storage.RoleCell)
	if err := celldb.InsertCellRows(ctx, cell, nova.CellRows{ComputeNodes: ns, Instances: is}); err != nil {
		b.Fatal(err)
	}
	api := cmdtest.OpenDB(b, s.API, storage.RoleAPI)
	one := int64(2)
	var maps []nova.InstanceMapping
	for _, in := range is {
		maps = append(maps, nova.InstanceMapping{InstanceUUID: in.UUID, CellID: &one, ProjectID: in.ProjectID, CreatedAt: in.CreatedAt})
	}
	cm := []nova.CellMapping{
		{ID: 1, UUID: nova.Cell0UUID, Name: "cell0", TransportURL: "none:///", DatabaseConnection: "mysql+pymysql://x@127.0.0.1/unused"},
		{ID: 2, UUID: "dddddddd-0000-4000-8000-000000000001", Name: "cell1", TransportURL: "fake://", DatabaseConnection: s.Cell.URL},
	}
	if err := apidb.InsertAPIRows(ctx, api, nova.APIRows{CellMappings: cm, InstanceMappings: maps}); err != nil {
		b.Fatal(err)
	}
	s.URL = testdb.PlacementAPI(b, s.Placement.URL) // syncs the standard classes first
	args := []string{"--api-db", s.API.URL, "--placement-db", s.Placement.URL, "--cell-db", s.Cell.URL, "migrate", "inventory"}
	switch layout {
	case "nested":
		args = append(args, "--layout", "nested")
	case "shared":
		args = append(args, "--shared-storage", "pool=*")
	}
	cmdtest.RpctlB(b, args...)
	return s
}

// BenchmarkClaimsHeal is the comparison: Nova 26's own
// heal_allocations (one GET and one PUT to the real placement-api per
// instance) on a 2,000-instance sample, extrapolated to 100,000, against
// Rpctl claims heal on 100,000 instances (and on the same sample). Nova's
// time excludes its Python start-up: the command runs in an already
// imported nova-manage.
func BenchmarkClaimsHeal(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench): needs MariaDB, placement-api and python3-nova")
	}
	testdb.RequirePython(b, "nova.cmd.manage", "pymysql")
	const sampleN, perNode = 2000, 20
	bigN := 100000
	if v, err := strconv.Atoi(os.Getenv("RPCTL_BENCH_HEAL_N")); err == nil && v > 0 {
		bigN = v // a smaller run to try the benchmark out
	}
	heal := func(s *cmdtest.HealSide) time.Duration {
		ctx := context.Background()
		cells := []claims.Cell{&celldb.Cell{DB: cmdtest.OpenDB(b, s.Cell, storage.RoleCell)}}
		h := claims.Healer{Cells: cells, Placement: &placementdb.ClaimsPlacement{DB: cmdtest.OpenDB(b, s.Placement, storage.RolePlacement)}}
		start := time.Now()
		res, err := h.Heal(ctx, claims.HealOptions{})
		d := time.Since(start)
		if err != nil || res.Code != 0 {
			b.Fatalf("rpctl heal: %+v %v", res, err)
		}
		return d
	}
	for i := 0; i < b.N; i++ {
		sample := benchHealCloud(b, sampleN/perNode, perNode)
		sampleCopy := cmdtest.CloneSide(b, sample)
		sample.WriteNovaConf(b)
		nm := cmdtest.StartNovaManage(b)
		if _, code := nm.Run(b, "--config-file", sample.Conf, "placement", "heal_allocations", "--max-count", "0"); code != 127 {
			b.Fatalf("nova-manage warm-up: exit %d", code)
		}
		start := time.Now()
		out, code := nm.Run(b, "--config-file", sample.Conf, "placement", "heal_allocations", "--skip-port-allocations")
		novaSample := time.Since(start)
		if code != 0 {
			b.Fatalf("nova-manage heal_allocations: exit %d\n%s", code, out)
		}
		rpctlSample := heal(sampleCopy)
		big := benchHealCloud(b, bigN/perNode, perNode)
		rpctlBig := heal(big)
		novaBig := novaSample.Seconds() * float64(bigN) / sampleN
		b.ReportMetric(novaSample.Seconds(), "nova-2k-s")
		b.ReportMetric(rpctlSample.Seconds(), "rpctl-2k-s")
		b.ReportMetric(novaBig, "nova-100k-extrapolated-s")
		b.ReportMetric(rpctlBig.Seconds(), "rpctl-100k-s")
		b.ReportMetric(novaBig/rpctlBig.Seconds(), "speedup-100k-x")
		b.ReportMetric(novaSample.Seconds()/rpctlSample.Seconds(), "speedup-2k-x")
		// The layouts heal through the built-in core; Nova's heal cannot
		// place them at all, so its flat time is the yardstick.
		for _, layout := range []string{"nested", "shared"} {
			d := heal(benchHealCloudLayout(b, bigN/perNode, perNode, layout))
			b.ReportMetric(d.Seconds(), "rpctl-100k-"+layout+"-s")
			b.ReportMetric(novaBig/d.Seconds(), "speedup-100k-"+layout+"-x")
		}
	}
}

package novajudge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/testdb"
)

// noFightPhase is issue #32's "never fight a running compute", after the
// comparison, on rpctl's Placement (mine, served at base):
//
//  1. Nova's computes of every cell are started again with their own
//     nova.conf, pointed at rpctl's placement-api (init_host and
//     update_available_resource(startup=True), as a service restart does).
//     Everything they change must be a known difference of the comparison
//     (where rpctl is still not Nova); the driver's capability traits they
//     add are the run-time-only exception.
//  2. rpctl migrate all, re-run per cell after that, changes 0 rows: every
//     provider (generation included), inventory, trait, aggregate and
//     allocation reads back the same.
//  3. --layout nested, into another empty Placement, never counts more
//     VCPU + PCPU in a host's tree than the host has CPU threads, and as
//     many as Nova's flat report.
func noFightPhase(t *testing.T, bin string, my *testdb.PrivateMySQL, judge judgeOut, hosts map[string]host, placementURL, base string, mine dump, hostDirs map[string]string) {
	t.Helper()
	cells := slices.Sorted(maps.Keys(judge.Cells))
	confs := map[string]string{}
	for _, cell := range cells {
		conf := filepath.Join(t.TempDir(), cell+".conf")
		if err := os.WriteFile(conf, []byte(judge.Cells[cell].RpctlConf), 0o600); err != nil {
			t.Fatal(err)
		}
		confs[cell] = conf
	}

	// 1. Nova's computes on rpctl's Placement.
	for _, cell := range cells {
		restartComputes(t, judge.Workdir, cell, base)
	}
	afterNova := dumpPlacement(t, base)
	diffs, st := compare(afterNova, mine, hosts)
	hostOf := func(name string) (host, bool) { return hostOfProvider(name, hosts) }
	var known, unknown []string
	for _, d := range diffs {
		if slices.ContainsFunc(knownDifferences, func(e expected) bool { return e.Match(d, hostOf) }) {
			known = append(known, d.String())
		} else {
			unknown = append(unknown, d.String())
		}
	}
	t.Logf("no-fight 1: Nova's computes started again on rpctl's Placement: %d driver capability traits added (run-time only), %d changes that are known differences:\n  %s",
		st.driverTraits, len(known), strings.Join(known, "\n  "))
	if len(unknown) > 0 {
		t.Errorf("no-fight 1: Nova's computes, started on rpctl's Placement, changed %d things that no known difference explains (rpctl did not write what they report):\n  %s", len(unknown), strings.Join(unknown, "\n  "))
	}
	if st.driverTraits == 0 {
		t.Errorf("no-fight 1: no driver capability trait on rpctl's Placement after the restart: the computes did not report")
	}
	// Now nova-compute owns every provider: status compares them with its
	// flat report, which is what it wrote.
	statusAgrees(t, "after Nova's computes ran on it", bin, judge, hostDirs, placementURL)

	// 2. rpctl re-run: 0 rows change.
	leftAlone := 0
	for _, cell := range cells {
		c := judge.Cells[cell]
		code, out := rpctlCode(t, bin, "--config-file", confs[cell], "--cell-db", c.Database, "--placement-db", placementURL, "migrate", "all")
		t.Logf("no-fight 2: rpctl migrate all (%s) after Nova's computes: exit %d\n%s", cell, code, out)
		if code == 255 || code == 127 {
			t.Fatalf("rpctl migrate all (%s) failed: exit %d", cell, code)
		}
		leftAlone += strings.Count(out, "): left alone;")
	}
	again := dumpPlacement(t, base)
	changed := dumpDiff(afterNova, again)
	t.Logf("no-fight 2: rpctl re-run after Nova's computes: %d rows changed, %d nodes said left alone (owned by nova-compute, plan differs)", len(changed), leftAlone)
	if len(changed) > 0 {
		t.Errorf("no-fight 2: rpctl's re-run changed %d rows Nova's computes own:\n  %s", len(changed), strings.Join(changed, "\n  "))
	}

	// 3. --layout nested counts no CPU twice.
	nestedURL := my.NewDatabase(t, "rpctl_nested")
	rpctl(t, bin, "--placement-db", nestedURL, "init")
	for _, cell := range cells {
		c := judge.Cells[cell]
		code, out := rpctlCode(t, bin, "--config-file", confs[cell], "--cell-db", c.Database, "--placement-db", nestedURL, "migrate", "inventory", "--layout", "nested")
		t.Logf("no-fight 3: rpctl migrate inventory --layout nested (%s): exit %d\n%s", cell, code, out)
		if code == 255 || code == 127 {
			t.Fatalf("rpctl migrate inventory --layout nested (%s) failed: exit %d", cell, code)
		}
	}
	nested := dumpPlacement(t, testdb.PlacementAPI(t, nestedURL))
	cpus := func(d dump, root string) (sum int, trees int) {
		for _, p := range d.Providers {
			if p.Root != root {
				continue
			}
			trees++
			for _, rc := range []string{"VCPU", "PCPU"} {
				if inv, ok := p.Inventories[rc]; ok {
					sum += int(inv["total"].(float64))
				}
			}
		}
		return sum, trees
	}
	checked := 0
	var lines []string
	for _, cell := range cells {
		for _, h := range judge.Cells[cell].Hosts {
			for _, node := range h.Nodes {
				n, providers := cpus(nested, node)
				flat, _ := cpus(judge.Placement, node)
				lines = append(lines, fmt.Sprintf("%s: %d providers, VCPU+PCPU %d, threads %d, Nova's flat %d", h.Name, providers, n, h.Threads, flat))
				if providers == 0 {
					t.Errorf("no-fight 3: %s (%s): no provider in the nested Placement", h.Name, node)
					continue
				}
				checked++
				if h.Threads <= 0 || n > h.Threads {
					t.Errorf("no-fight 3: %s: --layout nested has VCPU+PCPU %d for %d CPU threads", h.Name, n, h.Threads)
				}
				if n != flat {
					t.Errorf("no-fight 3: %s: --layout nested has VCPU+PCPU %d, Nova reports %d", h.Name, n, flat)
				}
			}
		}
	}
	t.Logf("no-fight 3: --layout nested, %d nodes checked:\n  %s", checked, strings.Join(lines, "\n  "))
}

// restartComputes starts one cell's computes again on the placement-api at
// base (scripts/nova_fleet_judge.py restart).
func restartComputes(t *testing.T, workdir, cell, base string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testdb.Python, filepath.Join(testdb.RepoRoot(), "scripts", "nova_fleet_judge.py"), "restart",
		"--cell", cell, "--workdir", workdir, "--placement-url", base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nova_fleet_judge.py restart --cell %s: %v\n%s", cell, err, tail(out, 8000))
	}
}

// dumpDiff lists every row that differs between two dumps of one
// Placement: providers by uuid with every field (generation included),
// and allocations by consumer.
func dumpDiff(a, b dump) []string {
	js := func(v any) string {
		out, _ := json.Marshal(v)
		return string(out)
	}
	pa, pb := map[string]string{}, map[string]string{}
	for _, p := range a.Providers {
		pa[p.UUID] = js(p)
	}
	for _, p := range b.Providers {
		pb[p.UUID] = js(p)
	}
	var out []string
	for _, u := range slices.Sorted(maps.Keys(union(pa, pb))) {
		if pa[u] != pb[u] {
			out = append(out, fmt.Sprintf("provider %s: %s -> %s", u, pa[u], pb[u]))
		}
	}
	for _, c := range slices.Sorted(maps.Keys(union(a.Allocations, b.Allocations))) {
		x, y := js(a.Allocations[c]), js(b.Allocations[c])
		if x != y {
			out = append(out, fmt.Sprintf("consumer %s: %s -> %s", c, x, y))
		}
	}
	return out
}

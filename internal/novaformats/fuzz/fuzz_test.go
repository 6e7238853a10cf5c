// Package fuzz holds the fuzz targets of package novaformats. They live
// apart because novaformats' own tests import samplecloud (and through it
// the SQLite driver), whose fuzz-instrumented build takes longer than the
// fuzzing itself on a busy machine.
package fuzz

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/fuzzcheck"
	"github.com/rpctl/rpctl/internal/novaformats"
)

// addFixtures seeds f with the stored-format fixtures (taken from Nova
// itself) whose names start with prefix, and with extra.
func addFixtures(f *testing.F, prefix string, extra ...string) {
	files, _ := filepath.Glob("../../../testdata/compute_nodes/" + prefix + "*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range extra {
		f.Add(s)
	}
}

// FuzzParsePCIStats: no blob panics or hangs the parser; what it accepts
// has no negative count, and every error is one line.
func FuzzParsePCIStats(f *testing.F) {
	addFixtures(f, "pci_stats.", "", "null", "[]", `{"count": 2, "vendor_id": "8086"}`, `[{"count": "1", "numa_node": null}]`)
	f.Fuzz(func(t *testing.T, s string) {
		var pools []novaformats.PCIPool
		var err error
		fuzzcheck.Within(t, func() { pools, err = novaformats.ParsePCIStats(&s) })
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		for _, p := range pools {
			if p.Count < 0 || p.Tags == nil {
				t.Fatalf("accepted pool %+v", p)
			}
		}
	})
}

// FuzzParseNUMATopology: no blob panics or hangs the parser; what is
// accepted has unique cell ids and no negative memory or core count.
func FuzzParseNUMATopology(f *testing.F) {
	addFixtures(f, "numa_topology.", "", "null", `{"cells": []}`, `{"cells": [{"id": 0, "cpus": "0-3,^1", "mem": {"total": 1024}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		var cells []novaformats.NUMACell
		var err error
		fuzzcheck.Within(t, func() { cells, err = novaformats.ParseNUMATopology(&s) })
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		ids := map[int64]bool{}
		for _, c := range cells {
			if ids[c.ID] || c.MemoryMB < 0 || c.Cores < 0 {
				t.Fatalf("accepted cells %+v", cells)
			}
			ids[c.ID] = true
		}
	})
}

// FuzzParseExtraResources: no blob panics the parser; totals accepted are
// non-negative; errors are one line.
func FuzzParseExtraResources(f *testing.F) {
	addFixtures(f, "extra_resources.", "", "null", "{}", `{"CUSTOM_X": 2}`, `{"CUSTOM_X": "3"}`)
	f.Fuzz(func(t *testing.T, s string) {
		var out map[string]int64
		var err error
		fuzzcheck.Within(t, func() { out, err = novaformats.ParseExtraResources(&s) })
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		for k, v := range out {
			if v < 0 {
				t.Fatalf("accepted %q = %d", k, v)
			}
		}
	})
}

// FuzzParseCPUSpec: no spec panics or hangs; what is accepted is a sorted
// list of distinct non-negative ids, each named by the spec.
func FuzzParseCPUSpec(f *testing.F) {
	for _, s := range []string{"0-3", "0-3,^2", "1,2,3", " 4 - 7 , ^5", "", "^1", "0-65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var cpus []int64
		var err error
		fuzzcheck.Within(t, func() { cpus, err = novaformats.ParseCPUSpec(s) })
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
			t.Fatalf("accepted %q as %v", s, cpus)
		}
		if len(cpus) > 0 && (cpus[0] < 0 || !strings.ContainsAny(s, "0123456789")) {
			t.Fatalf("accepted %q as %v", s, cpus)
		}
	})
}

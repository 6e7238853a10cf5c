package migrate

import (
	"fmt"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/release"
)

// Nova's allocation-ratio rules (Stein's initial-allocation-ratios work,
// unchanged up to Nova 31; only the initial ratios' defaults differ by
// release: InitialRatioDefaults), in one place so that the ratio migration
// and the inventory migration agree.
//
// Sources: nova/objects/compute_node.py migrate_empty_ratio and
// _from_db_object (a compute_nodes row), nova/virt/driver.py
// _get_allocation_ratios (a Placement inventory), nova/conf/compute.py.

// RatioKind is one of the three ratios Nova keeps per compute node.
type RatioKind int

// The ratios, in the order Nova's migration visits them.
const (
	RatioCPU RatioKind = iota
	RatioDisk
	RatioRAM
)

// RatioKinds lists every kind.
var RatioKinds = []RatioKind{RatioCPU, RatioDisk, RatioRAM}

func (k RatioKind) prefix() string {
	switch k {
	case RatioCPU:
		return "cpu"
	case RatioRAM:
		return "ram"
	default:
		return "disk"
	}
}

// Option is the nova.conf [DEFAULT] override option and the compute_nodes
// column: "cpu_allocation_ratio".
func (k RatioKind) Option() string { return k.prefix() + "_allocation_ratio" }

// InitialOption is "initial_cpu_allocation_ratio".
func (k RatioKind) InitialOption() string { return "initial_" + k.Option() }

// ResourceClass is the Placement class the ratio applies to.
func (k RatioKind) ResourceClass() string {
	switch k {
	case RatioCPU:
		return "VCPU"
	case RatioRAM:
		return "MEMORY_MB"
	default:
		return "DISK_GB"
	}
}

// Conf returns the override (nil when unset) and the initial value.
func (k RatioKind) Conf(r config.Ratios) (override *float64, initial float64) {
	switch k {
	case RatioCPU:
		return r.CPU, r.InitialCPU
	case RatioRAM:
		return r.RAM, r.InitialRAM
	default:
		return r.Disk, r.InitialDisk
	}
}

// InitialRatios are Nova's defaults of [DEFAULT]
// initial_cpu_allocation_ratio, initial_ram_allocation_ratio and
// initial_disk_allocation_ratio: what a compute node's NULL or 0.0 ratio
// and a new Placement inventory get when neither xxx_allocation_ratio nor
// the initial option is set.
type InitialRatios struct {
	CPU, RAM, Disk float64
}

// InitialRatioDefaults are the initial ratios' defaults by release, read
// from each release's option definitions (cfg.FloatOpt in
// nova/conf/compute.py; docs/releases.md). The rule that applies them
// (migrate_empty_ratio, _get_allocation_ratios) is the same in both.
var InitialRatioDefaults = map[release.Name]InitialRatios{
	// Nova 26.2.2 (Debian 12): nova/conf/compute.py:531, :547, :563.
	release.Zed: {CPU: 16.0, RAM: 1.5, Disk: 1.0},
	// Nova 27.0.0 (2023.1): nova/conf/compute.py:531-532, :547-548,
	// :563-564. The CPU and RAM defaults fell here: nova commit 1260cdd492
	// "update default overcommit" (bp/nova-change-default-overcommit-values).
	release.R2023_1: {CPU: 4.0, RAM: 1.0, Disk: 1.0},
	// Nova 28.0.0 (2023.2): nova/conf/compute.py:531-532, :547-548, :563-564.
	release.R2023_2: {CPU: 4.0, RAM: 1.0, Disk: 1.0},
	// Nova 29.0.0 (2024.1): nova/conf/compute.py:530-531, :546-547, :562-563.
	release.R2024_1: {CPU: 4.0, RAM: 1.0, Disk: 1.0},
	// Nova 30.0.0 (2024.2): nova/conf/compute.py:530-531, :546-547, :562-563.
	release.R2024_2: {CPU: 4.0, RAM: 1.0, Disk: 1.0},
	// Nova 31.0.0 (Debian 13): nova/conf/compute.py:530, :546, :562.
	release.R2025_1: {CPU: 4.0, RAM: 1.0, Disk: 1.0},
}

// InitialRatiosOf returns rel's defaults ("" is release.Default).
func InitialRatiosOf(rel release.Name) (InitialRatios, error) {
	n, err := release.Parse(string(rel))
	if err != nil {
		return InitialRatios{}, err
	}
	d, ok := InitialRatioDefaults[n]
	if !ok {
		return InitialRatios{}, fmt.Errorf("no initial allocation ratios known for release %q", n)
	}
	return d, nil
}

// RatiosFor returns r with every initial_xxx_allocation_ratio that no
// config file or flag set (its Source is "") replaced by rel's default:
// the value that release's Nova would use with the same nova.conf.
func RatiosFor(r config.Ratios, rel release.Name) (config.Ratios, error) {
	d, err := InitialRatiosOf(rel)
	if err != nil {
		return config.Ratios{}, err
	}
	if r.InitialCPUSource == "" {
		r.InitialCPU = d.CPU
	}
	if r.InitialRAMSource == "" {
		r.InitialRAM = d.RAM
	}
	if r.InitialDiskSource == "" {
		r.InitialDisk = d.Disk
	}
	return r, nil
}

// IsEmptyRatio reports whether a stored ratio is one Nova treats as "never
// set": NULL or 0.0. Negative values are not empty: Nova leaves them alone.
func IsEmptyRatio(v *float64) bool { return v == nil || *v == 0 }

// RatioSource says which rule chose a ratio, for dry runs and explanations.
type RatioSource string

// The rules, in precedence order.
const (
	FromOverride    RatioSource = "override"     // xxx_allocation_ratio is set and not 0.0
	FromPlacement   RatioSource = "placement"    // the inventory's existing value is kept
	FromComputeNode RatioSource = "compute_node" // the legacy row's own ratio
	FromInitial     RatioSource = "initial"      // initial_xxx_allocation_ratio
)

// ConfRatio is Nova's `CONF.x_allocation_ratio or CONF.initial_x_allocation_ratio`:
// an override of 0.0 counts as unset, because Python's `or` treats 0.0 as
// false — that is how Nova 26 behaves, and why `rpctl status` calls an
// explicit 0.0 a failure.
func ConfRatio(override *float64, initial float64) (float64, RatioSource) {
	if override != nil && *override != 0 {
		return *override, FromOverride
	}
	return initial, FromInitial
}

// EffectiveRatio is the ratio Nova uses for a compute_nodes row: the stored
// value unless it is NULL or 0.0, else ConfRatio. fix says the stored value
// is empty and Nova (migrate_empty_ratio, or loading the row) writes back v.
func EffectiveRatio(row, override *float64, initial float64) (v float64, src RatioSource, fix bool) {
	if !IsEmptyRatio(row) {
		return *row, FromComputeNode, false
	}
	v, src = ConfRatio(override, initial)
	return v, src, true
}

// PlacementRatio is the allocation ratio to write into a Placement inventory
// of the kind's class, following nova/virt/driver.py _get_allocation_ratios
// extended by the legacy row rpctl migrates from:
//
//  1. a set, non-zero xxx_allocation_ratio always wins, even over a value an
//     operator set through the Placement API;
//  2. else an existing inventory keeps a ratio above 0, so edits through the
//     API survive re-runs;
//  3. else (no inventory yet, or one whose ratio is 0 or negative: Placement
//     8.0.0's schema has no minimum on allocation_ratio, so an API edit could
//     leave one, though it leaves no capacity and `inventory set` now refuses
//     it), when the compute_nodes row's ratio is set (not NULL, not 0.0, not
//     negative), that ratio: it is what the old resource tracker reported
//     and the scheduler used;
//  4. else initial_xxx_allocation_ratio.
//
// Nova's own _get_allocation_ratios would keep an existing 0.0; a migration
// that did so refused the node on every run for a ratio its row did not
// have (issue 37 row 4), so the row is read instead.
func PlacementRatio(override, existing, row *float64, initial float64) (float64, RatioSource) {
	if override != nil && *override != 0 {
		return *override, FromOverride
	}
	if existing != nil && *existing > 0 {
		return *existing, FromPlacement
	}
	if row != nil && *row > 0 {
		return *row, FromComputeNode
	}
	return initial, FromInitial
}

package migrate

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/flagnum"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

func ratiosMigration() migrationSpec {
	return migrationSpec{
		Name:  "ratios",
		Rows:  []string{migrate.EmptyRatioName},
		Order: 20,
		Short: "Fix 0.0 and NULL allocation ratios of compute nodes as Nova does",
		Long: `Every live compute_nodes row with a 0.0 or NULL cpu/ram/disk allocation ratio gets
xxx_allocation_ratio when it is set (and not 0.0), else initial_xxx_allocation_ratio;
the row's other ratios are untouched. This is Nova's migrate_empty_ratio (the summary
row keeps that name), run over every cell (or --cell) instead of only [database] connection.

The options come from --config-file ([DEFAULT]); the flags of the same names override it.
An initial_xxx_allocation_ratio set nowhere takes the default of --release's Nova (the
flags' help lists them; Nova 27 lowered cpu's and ram's).
An explicit 0.0 override behaves as in Nova: it falls back to the initial value.`,
		Need:     storage.NeedCells,
		AddFlags: addRatioFlags,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			r, err := migrationRatios(f, &o.flags.ratios)
			if err != nil {
				return nil, err
			}
			return []migrate.Migration{&migrate.EmptyRatios{Cells: stores.MigrateCells(dbs.Cells), Ratios: r}}, nil
		},
		DryRun: dryRunRatios,
	}
}

// ratioFlag is an optional option value: set says the flag was given, so a
// Flag can override nova.conf while an absent one leaves it alone.
type ratioFlag struct {
	val string
	set bool
}

func (r *ratioFlag) String() string { return r.val }

func (r *ratioFlag) Set(s string) error { r.val, r.set = s, true; return nil }

func (r *ratioFlag) Type() string { return "ratio" }

// ratioFlagSet holds the ratio flags of `migrate ratios` and `migrate all`
// (and of any other command that writes ratios and calls addRatioFlags).
type ratioFlagSet struct {
	cpu, ram, disk                      ratioFlag
	initialCPU, initialRAM, initialDisk ratioFlag
	// release is --release: whose defaults the initial ratios nova.conf
	// and the flags leave unset take.
	release string
}

// addRatioFlags adds the nova.conf ratio options as flags. Values are
// checked only when a migration runs, so that the error names the flag the
// same way it names a config line. It skips flags already present, so that
// two migrations offered by `migrate all` may both call it.
func addRatioFlags(fs *pflag.FlagSet, mf *migrationFlags) {
	ratioFlags := &mf.ratios
	add := func(v *ratioFlag, name, usage string) {
		if fs.Lookup(name) == nil {
			fs.Var(v, name, usage)
		}
	}
	add(&ratioFlags.cpu, "cpu-allocation-ratio", "override [DEFAULT] cpu_allocation_ratio (unset by default: keep ratios set through the Placement API)")
	add(&ratioFlags.ram, "ram-allocation-ratio", "override [DEFAULT] ram_allocation_ratio")
	add(&ratioFlags.disk, "disk-allocation-ratio", "override [DEFAULT] disk_allocation_ratio")
	add(&ratioFlags.initialCPU, "initial-cpu-allocation-ratio", "override [DEFAULT] initial_cpu_allocation_ratio (default "+initialDefaults(migrate.RatioCPU)+")")
	add(&ratioFlags.initialRAM, "initial-ram-allocation-ratio", "override [DEFAULT] initial_ram_allocation_ratio (default "+initialDefaults(migrate.RatioRAM)+")")
	add(&ratioFlags.initialDisk, "initial-disk-allocation-ratio", "override [DEFAULT] initial_disk_allocation_ratio (default "+initialDefaults(migrate.RatioDisk)+")")
	shared.AddReleaseFlag(fs, &ratioFlags.release, "whose Nova's rules apply: the defaults of the initial_*_allocation_ratio options nova.conf leaves unset, the standard traits a [pci] device_spec traits tag keeps as they are")
}

// initialDefaults lists a kind's initial ratio default per release, for
// the flags' help, consecutive releases with one value as a range: "16.0 in
// zed, 4.0 in 2023.1 to 2025.1: --release".
func initialDefaults(k migrate.RatioKind) string {
	var parts []string
	var first, last release.Name
	var cur string
	flush := func() {
		if first == last {
			parts = append(parts, cur+" in "+string(first))
		} else {
			parts = append(parts, cur+" in "+string(first)+" to "+string(last))
		}
	}
	for _, n := range release.Names() {
		d := migrate.InitialRatioDefaults[n]
		v := map[migrate.RatioKind]float64{migrate.RatioCPU: d.CPU, migrate.RatioRAM: d.RAM, migrate.RatioDisk: d.Disk}[k]
		s := migrate.FormatRatio(&v)
		if first != "" && s == cur {
			last = n
			continue
		}
		if first != "" {
			flush()
		}
		first, last, cur = n, n, s
	}
	flush()
	return strings.Join(parts, ", ") + ": --release"
}

// migrationRatios returns the allocation-ratio options: nova.conf's, with
// the flags given winning. A non-numeric or negative value is an error
// naming the flag or file line, before anything is written.
func migrationRatios(f *cmdutil.Factory, ratioFlags *ratioFlagSet) (config.Ratios, error) {
	o, err := f.Options()
	if err != nil {
		return config.Ratios{}, err
	}
	return withRatioFlags(o.Ratios, ratioFlags)
}

// withRatioFlags returns r (a nova.conf's ratio options: the global
// files', or a compute host's own) with the flags given winning, checked
// as migrationRatios says.
func withRatioFlags(r config.Ratios, ratioFlags *ratioFlagSet) (config.Ratios, error) {
	// The release's defaults first, for the initial ratios nova.conf
	// leaves unset; the flags below win over both.
	rel, err := shared.ParseRelease(ratioFlags.release)
	if err != nil {
		return config.Ratios{}, &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
	}
	if r, err = migrate.RatiosFor(r, rel); err != nil {
		return config.Ratios{}, &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
	}
	override := func(fl *ratioFlag, name string, dst **float64, src *string) error {
		if !fl.set {
			return nil
		}
		v, err := flagnum.Ratio(name, fl.val, inventory.MaxRatio)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
		}
		*dst, *src = &v, "--"+name
		return nil
	}
	initial := func(fl *ratioFlag, name string, dst *float64, src *string) error {
		if !fl.set {
			return nil
		}
		v, err := flagnum.Ratio(name, fl.val, inventory.MaxRatio)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
		}
		*dst, *src = v, "--"+name
		return nil
	}
	for _, err := range []error{
		override(&ratioFlags.cpu, "cpu-allocation-ratio", &r.CPU, &r.CPUSource),
		override(&ratioFlags.ram, "ram-allocation-ratio", &r.RAM, &r.RAMSource),
		override(&ratioFlags.disk, "disk-allocation-ratio", &r.Disk, &r.DiskSource),
		initial(&ratioFlags.initialCPU, "initial-cpu-allocation-ratio", &r.InitialCPU, &r.InitialCPUSource),
		initial(&ratioFlags.initialRAM, "initial-ram-allocation-ratio", &r.InitialRAM, &r.InitialRAMSource),
		initial(&ratioFlags.initialDisk, "initial-disk-allocation-ratio", &r.InitialDisk, &r.InitialDiskSource),
	} {
		if err != nil {
			return config.Ratios{}, err
		}
	}
	// nova.conf's values too (the flags' were checked as parsed): a ratio
	// beyond a FLOAT column fails the batch at write time, so it is refused
	// before anything, --dry-run too, as a configuration error.
	for _, v := range []struct {
		name string
		val  *float64
	}{
		{r.CPUSource, r.CPU}, {r.RAMSource, r.RAM}, {r.DiskSource, r.Disk},
		{"initial_cpu_allocation_ratio", &r.InitialCPU}, {"initial_ram_allocation_ratio", &r.InitialRAM}, {"initial_disk_allocation_ratio", &r.InitialDisk},
	} {
		if v.val != nil && *v.val > inventory.MaxRatio {
			return config.Ratios{}, fmt.Errorf("%s = %g is greater than %g, the largest allocation ratio Placement stores (a FLOAT column)", v.name, *v.val, inventory.MaxRatio)
		}
	}
	return r, nil
}

func dryRunRatios(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error) {
	r, err := migrationRatios(f, &o.flags.ratios)
	if err != nil {
		return 0, err
	}
	limit := 0
	if o.MaxCountSet {
		limit = o.MaxCount
	}
	changes, skipped, err := migrate.PlanEmptyRatios(ctx, stores.MigrateCells(dbs.Cells), r, limit)
	if err != nil {
		return 0, err
	}
	rows := output.Rows{Headers: []string{"cell", "id", "hypervisor_hostname", "ratio", "old", "new", "option"}}
	for _, c := range changes {
		rows.Add(c.Cell, c.ID, c.Node, c.Ratio, output.Cell{Text: migrate.FormatRatio(c.Old), Value: c.Old}, c.New, c.Option)
	}
	if err := f.Write(rows, nil); err != nil {
		return 0, err
	}
	for _, s := range skipped {
		fmt.Fprintf(f.IO.ErrOut, "would skip %v\n", s)
	}
	if len(changes) == 0 && len(skipped) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "%s: no compute node has a NULL or 0.0 allocation ratio; nothing to change\n", migrate.EmptyRatioName)
	}
	if len(skipped) > 0 {
		return 2, nil
	}
	return 0, nil
}

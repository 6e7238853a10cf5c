// Package inventory holds `rpctl inventory` list, show and delete; set is
// its own package below it (cmd/inventory/set), which delete runs too.
package inventory

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	setcmd "github.com/rpctl/rpctl/cmd/inventory/set"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
)

// NewCmdInventory builds `rpctl inventory`.
func NewCmdInventory(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "inventory",
		Short: "List, show, set and delete resource provider inventories, generation-safe",
		Long: `Inventories of resource providers on the Placement database (the database flags) or the
Placement API (--os-cloud/--os-endpoint). Every write is generation-checked: read, edit,
write with the generation read; on a conflict rpctl re-reads and re-applies the same edit,
up to --attempts times, and reports a conflict that persists instead of forcing it.

` + cmdutil.StoreExitCodes,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newCmdInventoryList(f), newCmdInventoryShow(f), setcmd.NewCmdInventorySet(f), newCmdInventoryDelete(f), newCmdInventoryClass(f))
	return c
}

func newCmdInventoryList(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "list P",
		Short: "List a provider's inventories with used, capacity and free",
		Long: `List a provider's inventories: osc-placement's columns (resource_class, allocation_ratio,
min_unit, max_unit, reserved, step_size, total, used) plus capacity
(int((total - reserved) * allocation_ratio), as Placement computes it) and free
(capacity - used; negative when capacity was lowered below usage).

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				rows, err := shared.InventoryRows(ctx, st, p.UUID)
				if err != nil {
					return err
				}
				out := output.Rows{Headers: shared.InventoryHeaders}
				for _, r := range rows {
					out.Add(r.Cells()...)
				}
				return f.Write(out, nil)
			})
		},
	}
}

func newCmdInventoryShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show P CLASS",
		Short: "Show one inventory of a provider",
		Long:  "Show one inventory record with used, capacity and free.\n\n" + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args:  cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				rows, err := shared.InventoryRows(ctx, st, p.UUID)
				if err != nil {
					return err
				}
				for _, r := range rows {
					if r.ResourceClass == args[1] {
						return f.Write(output.Record(shared.InventoryHeaders, r.Cells()...), nil)
					}
				}
				return inventory.Errorf(inventory.ErrNotFound, "", "No inventory of class %s for %s", args[1], p.UUID)
			})
		},
	}
}

func newCmdInventoryDelete(f *cmdutil.Factory) *cobra.Command {
	var attempts int
	var classFlags []string
	var changes bool
	c := &cobra.Command{
		Use:   "delete P [CLASS...] [--resource-class CLASS]...",
		Short: "Delete inventories of a provider, or all of them (refused while they have allocations)",
		Long: `Delete the named inventory classes of a provider in one generation-checked write; with no
class named, every inventory of the provider, as osc's 'resource provider inventory delete P'
(DELETE /resource_providers/{uuid}/inventories). --resource-class is osc's spelling of a class.
Placement refuses to delete an inventory that has allocations (exit 2).
Like osc it prints nothing; --changes prints rpctl's change log (each class removed, with
its record before).

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			classes := append(args[1:], classFlags...)
			for _, rc := range classes {
				if err := inventory.CheckClassName(rc); err != nil {
					return cmdutil.UsageError("%v", err)
				}
			}
			if err := shared.CheckCounts(shared.Count{Flag: "attempts", N: attempts}); err != nil {
				return err
			}
			edit := inventory.DeleteEdit(classes)
			if len(classes) == 0 {
				edit = inventory.DeleteAllEdit()
			}
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				o := &setcmd.InventorySetOptions{Yes: true, Attempts: attempts, Parallel: 1, Changes: changes, Silent: true}
				return setcmd.RunInventorySet(ctx, f, st, o, args[0], edit)
			})
		},
	}
	c.Flags().IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
	c.Flags().StringArrayVar(&classFlags, "resource-class", nil, "a class to delete, as osc's --resource-class (repeatable)")
	c.Flags().BoolVar(&changes, "changes", false, setcmd.ChangesHelp)
	return c
}

// classSetHeaders are osc-placement's inventory class set fields, in its
// order (INVENTORY_FIELDS).
var classSetHeaders = []string{"allocation_ratio", "min_unit", "max_unit", "reserved", "step_size", "total"}

// newCmdInventoryClass builds `rpctl inventory class set`, osc's resource
// provider inventory class set.
func newCmdInventoryClass(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "class",
		Short: "Replace one inventory record of a provider (osc's resource provider inventory class)",
		Args:  cobra.NoArgs,
	}
	var attempts int
	var total, reserved, minUnit, maxUnit, stepSize int64
	var ratio float64
	set := &cobra.Command{
		Use:   "set P CLASS --total N [--reserved N] [--min_unit N] [--max_unit N] [--step_size N] [--allocation_ratio R]",
		Short: "Replace the record of one class of a provider, as osc's resource provider inventory class set",
		Long: `Replace the inventory record of CLASS on provider P (uuid or name), as osc's resource
provider inventory class set (PUT /resource_providers/{uuid}/inventories/{class}): the class
gets the fields given and Placement's defaults for the others (reserved 0, min_unit 1,
max_unit 2147483647, step_size 1, allocation_ratio 1.0); --total is required. The provider's
other classes are kept. As in Placement only a class the provider has is replaced: another
one is refused (400, exit 2; inventory set adds classes). Prints the resulting record, as osc.

The flags are osc's, with underscores. rpctl checks the record as inventory set does
(Placement's limits and rpctl's own rules: min_unit not above max_unit, allocation_ratio
above 0) and writes it generation-checked: read, written with the generation read, re-read
and re-applied on a conflict up to --attempts times (osc sends one PUT with the generation
it read). Lowering capacity below usage is allowed, as in Placement, with a warning on
standard error.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			class := args[1]
			if err := inventory.CheckClassName(class); err != nil {
				return cmdutil.UsageError("%v", err)
			}
			if !c.Flags().Changed("total") {
				return cmdutil.UsageError("inventory class set: --total is required")
			}
			if err := shared.CheckCounts(shared.Count{Flag: "attempts", N: attempts}); err != nil {
				return err
			}
			var spec []string
			for _, fl := range []struct {
				name  string
				value string
			}{
				{"total", strconv.FormatInt(total, 10)}, {"reserved", strconv.FormatInt(reserved, 10)},
				{"min_unit", strconv.FormatInt(minUnit, 10)}, {"max_unit", strconv.FormatInt(maxUnit, 10)},
				{"step_size", strconv.FormatInt(stepSize, 10)}, {"allocation_ratio", strconv.FormatFloat(ratio, 'g', -1, 64)},
			} {
				if c.Flags().Changed(fl.name) {
					spec = append(spec, fmt.Sprintf("%s:%s=%s", class, fl.name, fl.value))
				}
			}
			edits, err := inventory.ParseEdits(spec)
			if err != nil {
				return cmdutil.UsageError("%v", err)
			}
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				r := (&inventory.Editor{Store: st, Attempts: attempts}).EditInventories(ctx, p, inventory.ClassSetEdit(p.UUID, class, edits))
				for _, w := range r.Warnings {
					fmt.Fprintln(f.IO.ErrOut, "warning: "+w)
				}
				if r.Err != nil {
					return r.Err
				}
				v := r.Want[class]
				return f.Write(output.Record(classSetHeaders, v.AllocationRatio, v.MinUnit, v.MaxUnit, v.Reserved, v.StepSize, v.Total), nil)
			})
		},
	}
	fl := set.Flags()
	fl.Int64Var(&total, "total", 0, "the amount of the resource the provider has (required)")
	fl.Int64Var(&reserved, "reserved", 0, "the amount reserved for the provider's own use (default 0)")
	fl.Int64Var(&minUnit, "min_unit", 0, "the least any one allocation may take (default 1)")
	fl.Int64Var(&maxUnit, "max_unit", 0, "the most any one allocation may take (default 2147483647)")
	fl.Int64Var(&stepSize, "step_size", 0, "allocations must be multiples of this (default 1)")
	fl.Float64Var(&ratio, "allocation_ratio", 0, "capacity is (total - reserved) x this (default 1.0)")
	fl.IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
	c.AddCommand(set)
	return c
}

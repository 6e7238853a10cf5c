// Package inventory holds `rpctl inventory` list, show and delete; set is
// its own package below it (cmd/inventory/set), which delete runs too.
package inventory

import (
	"context"

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
	c.AddCommand(newCmdInventoryList(f), newCmdInventoryShow(f), setcmd.NewCmdInventorySet(f), newCmdInventoryDelete(f))
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

` + cmdutil.StoreExitCodes,
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
		Long:  "Show one inventory record with used, capacity and free.\n\n" + cmdutil.StoreExitCodes,
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
	c := &cobra.Command{
		Use:   "delete P [CLASS...] [--resource-class CLASS]...",
		Short: "Delete inventories of a provider, or all of them (refused while they have allocations)",
		Long: `Delete the named inventory classes of a provider in one generation-checked write; with no
class named, every inventory of the provider, as osc's 'resource provider inventory delete P'
(DELETE /resource_providers/{uuid}/inventories). --resource-class is osc's spelling of a class.
Placement refuses to delete an inventory that has allocations (exit 2).

` + cmdutil.StoreExitCodes,
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
				o := &setcmd.InventorySetOptions{Yes: true, Attempts: attempts, Parallel: 1}
				return setcmd.RunInventorySet(ctx, f, st, o, args[0], edit)
			})
		},
	}
	c.Flags().IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
	c.Flags().StringArrayVar(&classFlags, "resource-class", nil, "a class to delete, as osc's --resource-class (repeatable)")
	return c
}

// Package trait holds `rpctl trait`.
package trait

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
)

// NewCmdTrait builds `rpctl trait`.
func NewCmdTrait(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{Use: "trait", Short: "List, show, create and delete Placement traits", Args: cobra.NoArgs}
	var filter inventory.TraitFilter
	var associated string
	list := &cobra.Command{
		Use: "list", Short: "List traits",
		Long: `List traits: --name startswith:PREFIX or in:A,B, --associated true|false.

--associated alone is true: osc's trait list --associated (a switch there) works as it is;
--associated false (or --associated=false) lists the traits no provider has.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// "--associated false": the switch took no value, the word
			// after it came as an argument.
			if len(args) == 1 {
				if !c.Flags().Changed("associated") || associated != "true" || (args[0] != "true" && args[0] != "false") {
					return fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath())
				}
				associated = args[0]
			}
			switch associated {
			case "":
			case "true", "false":
				v := associated == "true"
				filter.Associated = &v
			default:
				return cmdutil.UsageError("--associated must be true or false, got %q", associated)
			}
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				names, err := st.ListTraits(ctx, filter)
				if err != nil {
					return err
				}
				return shared.NameRows(f, "name", names)
			})
		},
	}
	list.Flags().StringVar(&filter.Name, "name", "", "startswith:PREFIX or in:A,B")
	list.Flags().StringVar(&associated, "associated", "", "true: only traits some provider has; false: only those none has")
	list.Flags().Lookup("associated").NoOptDefVal = "true"
	c.AddCommand(list, newCmdTraitShow(f),
		shared.NewCmdCreateName(f, "trait", "Create a custom trait (no-op when it exists)",
			"Create a CUSTOM_ trait (PUT /traits/{name}); one that exists is left as it is.",
			func(ctx context.Context, st inventory.Store, name string) (bool, error) {
				return st.CreateTrait(ctx, name)
			}),
		&cobra.Command{
			Use: "delete CUSTOM_NAME", Short: "Delete a custom trait (refused while a provider has it)", Long: cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error { return st.DeleteTrait(ctx, args[0]) })
			},
		},
	)
	return c
}

// traitName is every name a trait can have (Placement's schema for custom
// traits; the standard ones match it too): any other name is no trait.
// Compiled on first use: nothing runs at package init.
var traitName = &lazyre.Regexp{Expr: `^[A-Z0-9_]+$`}

// newCmdTraitShow builds `rpctl trait show NAME`, osc's trait show.
func newCmdTraitShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show TRAIT",
		Short: "Show a trait if it exists, as osc's trait show (GET /traits/{name})",
		Long: `Show the trait TRAIT (its one field, name) when Placement has it, as osc's trait show
does; an unknown trait is Placement's "No such trait(s): TRAIT." (exit 2). rpctl asks
GET /traits?name=in:TRAIT, which answers the same on both backends.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				name := args[0]
				found := false
				if traitName.Get().MatchString(name) {
					names, err := st.ListTraits(ctx, inventory.TraitFilter{Name: "in:" + name})
					if err != nil {
						return err
					}
					found = slices.Contains(names, name)
				}
				if !found {
					return inventory.Errorf(inventory.ErrNotFound, "", "No such trait(s): %s.", name)
				}
				return f.Write(output.Record([]string{"name"}, name), nil)
			})
		},
	}
}

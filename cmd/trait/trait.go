// Package trait holds `rpctl trait`.
package trait

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/inventory"
)

// NewCmdTrait builds `rpctl trait`.
func NewCmdTrait(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{Use: "trait", Short: "List, create and delete Placement traits", Args: cobra.NoArgs}
	var filter inventory.TraitFilter
	var associated string
	list := &cobra.Command{
		Use: "list", Short: "List traits",
		Long: `List traits: --name startswith:PREFIX or in:A,B, --associated true|false.

` + cmdutil.StoreExitCodes,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
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
	c.AddCommand(list,
		&cobra.Command{
			Use: "create CUSTOM_NAME", Short: "Create a custom trait (no-op when it exists)", Long: cmdutil.StoreExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
					if _, err := st.CreateTrait(ctx, args[0]); err != nil {
						return err
					}
					return shared.NameRows(f, "name", args[:1])
				})
			},
		},
		&cobra.Command{
			Use: "delete CUSTOM_NAME", Short: "Delete a custom trait (refused while a provider has it)", Long: cmdutil.StoreExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error { return st.DeleteTrait(ctx, args[0]) })
			},
		},
	)
	return c
}

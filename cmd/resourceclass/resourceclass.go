// Package resourceclass holds `rpctl resource-class`.
package resourceclass

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/inventory"
)

// NewCmdResourceClass builds `rpctl resource-class`.
func NewCmdResourceClass(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{Use: "resource-class", Short: "List, create and delete Placement resource classes", Args: cobra.NoArgs}
	c.AddCommand(
		&cobra.Command{
			Use: "list", Short: "List resource classes", Long: cmdutil.StoreExitCodes, Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
					names, err := st.ListResourceClasses(ctx)
					if err != nil {
						return err
					}
					return shared.NameRows(f, "name", names)
				})
			},
		},
		&cobra.Command{
			Use: "create CUSTOM_NAME", Short: "Create a custom resource class (no-op when it exists)",
			Long: "Create a CUSTOM_ resource class (PUT /resource_classes/{name}); one that exists is left as it is.\n\n" + cmdutil.StoreExitCodes,
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
					_, err := st.CreateResourceClass(ctx, args[0])
					if err != nil {
						return err
					}
					return shared.NameRows(f, "name", args[:1])
				})
			},
		},
		&cobra.Command{
			Use: "delete CUSTOM_NAME", Short: "Delete a custom resource class (refused while any inventory uses it)",
			Long: cmdutil.StoreExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error { return st.DeleteResourceClass(ctx, args[0]) })
			},
		},
	)
	return c
}

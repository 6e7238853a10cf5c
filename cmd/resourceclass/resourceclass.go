// Package resourceclass holds `rpctl resource-class`.
package resourceclass

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
)

// NewCmdResourceClass builds `rpctl resource-class`.
func NewCmdResourceClass(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{Use: "resource-class", Short: "List, show, create, set and delete Placement resource classes", Args: cobra.NoArgs}
	c.AddCommand(newCmdResourceClassShow(f), newCmdResourceClassSet(f),
		&cobra.Command{
			Use: "list", Short: "List resource classes", Long: cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes, Args: cobra.NoArgs,
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
		shared.NewCmdCreateName(f, "resource class", "Create a custom resource class (no-op when it exists)",
			"Create a CUSTOM_ resource class (PUT /resource_classes/{name}); one that exists is left as it is.",
			func(ctx context.Context, st inventory.Store, name string) (bool, error) {
				return st.CreateResourceClass(ctx, name)
			}),
		&cobra.Command{
			Use: "delete CUSTOM_NAME", Short: "Delete a custom resource class (refused while any inventory uses it)",
			Long: cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error { return st.DeleteResourceClass(ctx, args[0]) })
			},
		},
	)
	return c
}

// newCmdResourceClassShow builds `rpctl resource-class show NAME`, osc's
// resource class show.
func newCmdResourceClassShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show CLASS",
		Short: "Show a resource class, as osc's resource class show (GET /resource_classes/{name})",
		Long: `Show the resource class CLASS (its one field, name), standard or custom, as osc's
resource class show does; an unknown class is Placement's "No such resource class CLASS."
(exit 2).
rpctl reads GET /resource_classes, which answers the same on both backends.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				names, err := st.ListResourceClasses(ctx)
				if err != nil {
					return err
				}
				if !slices.Contains(names, args[0]) {
					return inventory.Errorf(inventory.ErrNotFound, "", "No such resource class %s.", args[0])
				}
				return f.Write(output.Record([]string{"name"}, args[0]), nil)
			})
		},
	}
}

// newCmdResourceClassSet builds `rpctl resource-class set NAME`, osc's
// resource class set: PUT /resource_classes/{name}.
func newCmdResourceClassSet(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "set CUSTOM_NAME",
		Short: "Create a custom resource class unless it exists, as osc's resource class set (PUT /resource_classes/{name})",
		Long: `Create the CUSTOM_ resource class NAME, or do nothing when it exists: PUT
/resource_classes/{name} (Placement 1.7), as osc's resource class set; like osc it prints
nothing. A name that is not CUSTOM_ is Placement's bad request (exit 2). rpctl's own
resource-class create does the same write (and prints nothing too, or with --changes
the name and whether it was created).

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				_, err := st.CreateResourceClass(ctx, args[0])
				return err
			})
		},
	}
}

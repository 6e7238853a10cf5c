package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/inventory"
)

// newCmdProviderNames builds `rpctl provider trait|aggregate list|set|add|remove`.
func newCmdProviderNames(f *cmdutil.Factory, kind string) *cobra.Command {
	header := map[string]string{"trait": "name", "aggregate": "uuid"}[kind]
	edit := func(ed *inventory.Editor, ctx context.Context, p inventory.Provider, e inventory.NameSetEdit) ([]string, error) {
		if kind == "trait" {
			return ed.EditTraits(ctx, p, e)
		}
		return ed.EditAggregates(ctx, p, e)
	}
	c := &cobra.Command{
		Use:   kind,
		Short: fmt.Sprintf("List and change a provider's %ss, generation-checked", kind),
		Args:  cobra.NoArgs,
	}
	c.AddCommand(&cobra.Command{
		Use:   "list P",
		Short: fmt.Sprintf("List a provider's %ss", kind),
		Long:  cmdutil.StoreExitCodes,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				var names []string
				var err error
				if kind == "trait" {
					_, names, err = st.ProviderTraits(ctx, p.UUID)
				} else {
					_, names, err = st.ProviderAggregates(ctx, p.UUID)
				}
				if err != nil {
					return err
				}
				// The store answers in Placement's order (osc shows it).
				return shared.NameRows(f, header, names)
			})
		},
	})
	for _, op := range []struct {
		use, short string
		min        int
		edit       func([]string) inventory.NameSetEdit
	}{
		{"set", "Replace a provider's %ss with exactly these (none: remove all)", 1, inventory.Replace},
		{"add", "Add %ss to a provider, keeping the others", 2, inventory.Add},
		{"remove", "Remove %ss from a provider, keeping the others", 2, inventory.Remove},
	} {
		var attempts int
		sub := &cobra.Command{
			Use:   op.use + " P " + map[string]string{"trait": "TRAIT...", "aggregate": "AGGREGATE_UUID..."}[kind],
			Short: fmt.Sprintf(op.short, kind),
			Long: fmt.Sprintf(`%s. The provider's list is read with its generation, edited, and
written with that generation; on a conflict it is re-read and the edit re-applied, up to
--attempts times. A change that changes nothing writes nothing.

`, fmt.Sprintf(op.short, kind)) + cmdutil.StoreExitCodes,
			Args: cobra.MinimumNArgs(op.min),
			RunE: func(c *cobra.Command, args []string) error {
				if err := shared.CheckCounts(shared.Count{Flag: "attempts", N: attempts}); err != nil {
					return err
				}
				return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
					names, err := edit(&inventory.Editor{Store: st, Attempts: attempts}, ctx, p, op.edit(args[1:]))
					if errors.Is(err, inventory.ErrNotFound) && op.use == "remove" {
						return fmt.Errorf("provider %s: %s %w", inventory.Label(p), kind, err)
					}
					if err != nil {
						return err
					}
					if op.use == "set" {
						return shared.NameRows(f, header, shared.SetOrder(kind, names, args[1:]))
					}
					return shared.NameRows(f, header, shared.NameOrder(kind, names))
				})
			},
		}
		sub.Flags().IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
		c.AddCommand(sub)
	}
	return c
}

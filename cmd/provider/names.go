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
		Long:  cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
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
		c.AddCommand(newCmdProviderNamesEdit(f, kind, header, op.use, op.short, op.min, op.edit, edit))
	}
	if kind == "trait" {
		c.AddCommand(newCmdProviderTraitDelete(f))
	}
	return c
}

// newCmdProviderNamesEdit builds `provider trait|aggregate set|add|remove`.
// set also takes osc's spelling: the names as --trait/--aggregate
// (repeatable), and for aggregates osc's --generation.
func newCmdProviderNamesEdit(f *cmdutil.Factory, kind, header, use, short string, minArgs int,
	opEdit func([]string) inventory.NameSetEdit,
	edit func(*inventory.Editor, context.Context, inventory.Provider, inventory.NameSetEdit) ([]string, error)) *cobra.Command {
	var attempts int
	var named []string
	var generation int64
	metavar := map[string]string{"trait": "TRAIT", "aggregate": "AGGREGATE_UUID"}[kind]
	long := fmt.Sprintf(`%s. The provider's list is read with its generation, edited, and
written with that generation; on a conflict it is re-read and the edit re-applied, up to
--attempts times. A change that changes nothing writes nothing.
`, fmt.Sprintf(short, kind))
	usage := use + " P " + metavar + "..."
	if use == "set" {
		usage = fmt.Sprintf("set P [%s...] [--%s %s]...", metavar, kind, metavar)
		long += fmt.Sprintf(`
osc's resource provider %s set P --%s %s (repeatable) works as it is: --%s names
are added to the positional ones, and none at all removes every %s, as in osc.`, kind, kind, metavar, kind, kind)
		if kind == "aggregate" {
			usage += " [--generation N]"
			long += `
--generation N (osc's, Placement 1.19) writes once at that provider generation: no read
and no retry, and a write even when nothing changes (the generation goes up, as osc's
does); a provider changed since is Placement's conflict (exit 1). Without it rpctl reads
the generation itself (osc at 1.19 and later refuses to run without one).`
		}
		long += "\n\n" + cmdutil.OSCExitCodes + "\n"
	}
	sub := &cobra.Command{
		Use:   usage,
		Short: fmt.Sprintf(short, kind),
		Long:  long + "\n" + cmdutil.StoreExitCodes,
		Args:  cobra.MinimumNArgs(minArgs),
		RunE: func(c *cobra.Command, args []string) error {
			if err := shared.CheckCounts(shared.Count{Flag: "attempts", N: attempts}); err != nil {
				return err
			}
			names := append(args[1:len(args):len(args)], named...)
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				var got []string
				var err error
				if c.Flags().Changed("generation") {
					got, err = inventory.SetAggregatesAt(ctx, st, p, generation, names)
				} else {
					got, err = edit(&inventory.Editor{Store: st, Attempts: attempts}, ctx, p, opEdit(names))
				}
				if errors.Is(err, inventory.ErrNotFound) && use == "remove" {
					return fmt.Errorf("provider %s: %s %w", inventory.Label(p), kind, err)
				}
				if err != nil {
					return err
				}
				if use == "set" {
					return shared.NameRows(f, header, shared.SetOrder(kind, got, names))
				}
				return shared.NameRows(f, header, shared.NameOrder(kind, got))
			})
		},
	}
	sub.Flags().IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
	if use == "set" {
		sub.Flags().StringArrayVar(&named, kind, nil, fmt.Sprintf("a %s to set, as osc's --%s (repeatable; added to the positional ones)", kind, kind))
		if kind == "aggregate" {
			sub.Flags().Int64Var(&generation, "generation", 0, "write once at this provider generation, as osc's --generation (no read, no retry)")
			sub.MarkFlagsMutuallyExclusive("generation", "attempts")
		}
	}
	return sub
}

// newCmdProviderTraitDelete builds `provider trait delete P`, osc's
// resource provider trait delete: every trait of the provider goes.
func newCmdProviderTraitDelete(f *cmdutil.Factory) *cobra.Command {
	var attempts int
	c := &cobra.Command{
		Use:   "delete P",
		Short: "Remove every trait of a provider, as osc's resource provider trait delete",
		Long: `Remove every trait of a provider (what DELETE /resource_providers/{uuid}/traits leaves:
no trait, the generation up by one when it had some), as osc's resource provider trait
delete P; like osc it prints nothing. rpctl writes it as "provider trait set P" with no
trait: read with the generation, written with it, re-read on a conflict up to --attempts
times (osc's DELETE is not generation-checked); a provider without traits is not written.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := shared.CheckCounts(shared.Count{Flag: "attempts", N: attempts}); err != nil {
				return err
			}
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				_, err := (&inventory.Editor{Store: st, Attempts: attempts}).EditTraits(ctx, p, inventory.Replace(nil))
				return err
			})
		},
	}
	c.Flags().IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
	return c
}

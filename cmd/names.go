package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
)

// nameRows prints a list of names under one column.
func nameRows(f *Factory, header string, names []string) error {
	rows := output.Rows{Headers: []string{header}}
	for _, n := range names {
		rows.Add(n)
	}
	return f.Write(rows, nil)
}

// newCmdProviderNames builds `rpctl provider trait|aggregate list|set|add|remove`.
func newCmdProviderNames(f *Factory, kind string) *cobra.Command {
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
		Long:  storeExitCodes,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
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
				return nameRows(f, header, names)
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

`, fmt.Sprintf(op.short, kind)) + storeExitCodes,
			Args: cobra.MinimumNArgs(op.min),
			RunE: func(c *cobra.Command, args []string) error {
				if err := checkCounts(count{"attempts", attempts}); err != nil {
					return err
				}
				return withProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
					names, err := edit(&inventory.Editor{Store: st, Attempts: attempts}, ctx, p, op.edit(args[1:]))
					if errors.Is(err, inventory.ErrNotFound) && op.use == "remove" {
						return fmt.Errorf("provider %s: %s %w", inventory.Label(p), kind, err)
					}
					if err != nil {
						return err
					}
					if op.use == "set" {
						return nameRows(f, header, setOrder(kind, names, args[1:]))
					}
					return nameRows(f, header, nameOrder(kind, names))
				})
			},
		}
		sub.Flags().IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
		c.AddCommand(sub)
	}
	return c
}

// NewCmdResourceClass builds `rpctl resource-class`.
func NewCmdResourceClass(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "resource-class", Short: "List, create and delete Placement resource classes", Args: cobra.NoArgs}
	c.AddCommand(
		&cobra.Command{
			Use: "list", Short: "List resource classes", Long: storeExitCodes, Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				return withStore(c, f, func(ctx context.Context, st inventory.Store) error {
					names, err := st.ListResourceClasses(ctx)
					if err != nil {
						return err
					}
					return nameRows(f, "name", names)
				})
			},
		},
		&cobra.Command{
			Use: "create CUSTOM_NAME", Short: "Create a custom resource class (no-op when it exists)",
			Long: "Create a CUSTOM_ resource class (PUT /resource_classes/{name}); one that exists is left as it is.\n\n" + storeExitCodes,
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return withStore(c, f, func(ctx context.Context, st inventory.Store) error {
					_, err := st.CreateResourceClass(ctx, args[0])
					if err != nil {
						return err
					}
					return nameRows(f, "name", args[:1])
				})
			},
		},
		&cobra.Command{
			Use: "delete CUSTOM_NAME", Short: "Delete a custom resource class (refused while any inventory uses it)",
			Long: storeExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return withStore(c, f, func(ctx context.Context, st inventory.Store) error { return st.DeleteResourceClass(ctx, args[0]) })
			},
		},
	)
	return c
}

// NewCmdTrait builds `rpctl trait`.
func NewCmdTrait(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "trait", Short: "List, create and delete Placement traits", Args: cobra.NoArgs}
	var filter inventory.TraitFilter
	var associated string
	list := &cobra.Command{
		Use: "list", Short: "List traits",
		Long: `List traits: --name startswith:PREFIX or in:A,B, --associated true|false.

` + storeExitCodes,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			switch associated {
			case "":
			case "true", "false":
				v := associated == "true"
				filter.Associated = &v
			default:
				return usageError("--associated must be true or false, got %q", associated)
			}
			return withStore(c, f, func(ctx context.Context, st inventory.Store) error {
				names, err := st.ListTraits(ctx, filter)
				if err != nil {
					return err
				}
				return nameRows(f, "name", names)
			})
		},
	}
	list.Flags().StringVar(&filter.Name, "name", "", "startswith:PREFIX or in:A,B")
	list.Flags().StringVar(&associated, "associated", "", "true: only traits some provider has; false: only those none has")
	c.AddCommand(list,
		&cobra.Command{
			Use: "create CUSTOM_NAME", Short: "Create a custom trait (no-op when it exists)", Long: storeExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return withStore(c, f, func(ctx context.Context, st inventory.Store) error {
					if _, err := st.CreateTrait(ctx, args[0]); err != nil {
						return err
					}
					return nameRows(f, "name", args[:1])
				})
			},
		},
		&cobra.Command{
			Use: "delete CUSTOM_NAME", Short: "Delete a custom trait (refused while a provider has it)", Long: storeExitCodes, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return withStore(c, f, func(ctx context.Context, st inventory.Store) error { return st.DeleteTrait(ctx, args[0]) })
			},
		},
	)
	return c
}

// setOrder orders the names `set` leaves as the answer to Placement's PUT,
// which osc's trait set and aggregate set print, lists them: traits as
// the traits table is read by name (placement/objects/trait.py, name_in),
// aggregates in the order the request gave them.
func setOrder(kind string, names, given []string) []string {
	if kind == "trait" {
		slices.Sort(names)
		return names
	}
	out := make([]string, 0, len(names))
	for _, g := range given {
		if slices.Contains(names, g) && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	// Names spelled otherwise than given (a store normalizing them) follow.
	for _, n := range nameOrder(kind, names) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// nameOrder sorts the names an edit leaves (set, add, remove) as Placement
// would list them (the list command prints the store's own order, which is
// Placement's): standard traits, synced in name order, by id, then custom
// ones, created later (by name: the API does not show their ids);
// aggregates by uuid.
func nameOrder(kind string, names []string) []string {
	slices.SortFunc(names, func(a, b string) int {
		if ca, cb := strings.HasPrefix(a, "CUSTOM_"), strings.HasPrefix(b, "CUSTOM_"); kind == "trait" && ca != cb {
			if cb {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
}

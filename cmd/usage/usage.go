// Package usage holds `rpctl usage`.
package usage

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/inventory"
)

// NewCmdUsage builds `rpctl usage`.
func NewCmdUsage(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{Use: "usage", Short: "Show a provider's or a project's usage", Args: cobra.NoArgs}
	var user string
	project := &cobra.Command{
		Use:   "project PROJECT [--user-id USER]",
		Short: "Show a project's (and user's) allocations summed by class (GET /usages), as osc's resource usage show",
		Long: `Show the sum of a project's allocations by class across every provider, as
'openstack resource usage show PROJECT' (GET /usages); --user-id keeps the allocations of
that user only. Classes with no allocation are not listed. From microversion 1.38 (and on
the database backend) Placement groups the sums by consumer type, and each row is one
type: resource_class holds its name (unknown for consumers without a type) and usage the
type's classes with its consumer_count, as osc prints them.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				groups, err := st.ProjectUsages(ctx, args[0], user)
				if err != nil {
					return err
				}
				rows := output.Rows{Headers: []string{"resource_class", "usage"}}
				for _, g := range groups {
					if g.ConsumerType == "" {
						for _, u := range g.Usages {
							rows.Add(u.Class, u.Amount)
						}
						continue
					}
					rows.Add(g.ConsumerType, usageDict(g))
				}
				return f.Write(rows, nil)
			})
		},
	}
	project.Flags().StringVar(&user, "user-id", "", "only this user's allocations")
	c.AddCommand(project)
	c.AddCommand(&cobra.Command{
		Use:   "show P",
		Short: "Show what is allocated against a provider, by class (GET .../usages)",
		Long:  "Show the sum of allocations of every class the provider has inventory of.\n\n" + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				_, u, err := st.Usages(ctx, p.UUID)
				if err != nil {
					return err
				}
				rows := output.Rows{Headers: []string{"resource_class", "usage"}}
				for _, rc := range placementOrder(slices.Collect(maps.Keys(u))) {
					rows.Add(rc, u[rc])
				}
				return f.Write(rows, nil)
			})
		},
	})
	return c
}

// usageDict is one consumer type's usages as Placement's handler builds
// its dict: consumer_count goes in after the first class.
func usageDict(g inventory.UsageGroup) output.Dict {
	var d output.Dict
	for i, u := range g.Usages {
		d = append(d, output.Item{Key: u.Class, Value: u.Amount})
		if i == 0 {
			d = append(d, output.Item{Key: "consumer_count", Value: g.Consumers})
		}
	}
	return d
}

// placementOrder sorts class names as Placement lists them (osc shows its
// order): standard classes by their id (os-resource-classes' order), then
// custom classes, whose ids follow in creation order, which the API does
// not show: by name.
func placementOrder(classes []string) []string {
	id := map[string]int{}
	for i, rc := range standards.ResourceClasses() {
		id[rc] = i
	}
	slices.SortFunc(classes, func(a, b string) int {
		ia, okA := id[a]
		ib, okB := id[b]
		switch {
		case okA && okB:
			return ia - ib
		case okA != okB:
			if okA {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return classes
}

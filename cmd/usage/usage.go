// Package usage holds `rpctl usage`.
package usage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

// NewCmdUsage builds `rpctl usage`.
func NewCmdUsage(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{Use: "usage", Short: "Show a provider's or a project's usage", Args: cobra.NoArgs}
	var user string
	var byType bool
	project := &cobra.Command{
		Use:   "project PROJECT [--user-id USER] [--by-consumer-type]",
		Short: "Show a project's (and user's) allocations summed by class (GET /usages), as osc's resource usage show",
		Long: `Show the sum of a project's allocations by class across every provider, as
'openstack resource usage show PROJECT' (GET /usages); --user-id keeps the allocations of
that user only. Classes with no allocation are not listed. One row per class
(resource_class, usage), at every microversion: what Placement answers, and osc prints,
before 1.38.

From microversion 1.38 Placement groups the sums by consumer type (INSTANCE, MIGRATION,
unknown for consumers written without one), and osc-placement 4.0.0 prints that answer
as it is: each type's name in resource_class and a dict of its classes and consumer_count
in usage. rpctl deliberately does not: by default it adds the types' sums up per class
(the rows osc prints at 1.37), and --by-consumer-type prints one row per consumer type and
class (consumer_type, resource_class, usage, consumer_count), which needs 1.38.
--os-placement-api-version applies on both backends: on the database, below 1.38 there are
no consumer types (--by-consumer-type is refused, as through the API).

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			typed := true // the database's answer, and the API's from 1.38
			if v := f.API.Microversion; v != "" && v != "latest" {
				mv, err := placementclient.ParseVersion(v)
				if err != nil {
					return cmdutil.UsageError("--os-placement-api-version %q: %v", v, err)
				}
				typed = mv.AtLeast(38)
			}
			if byType && !typed {
				return cmdutil.UsageError("--by-consumer-type needs Placement microversion 1.38 or later (consumer types); --os-placement-api-version is %s", f.API.Microversion)
			}
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				groups, err := st.ProjectUsages(ctx, args[0], user)
				if err != nil {
					return err
				}
				if byType {
					rows := output.Rows{Headers: []string{"consumer_type", "resource_class", "usage", "consumer_count"}}
					for _, g := range groups {
						if g.ConsumerType == "" {
							return fmt.Errorf("--by-consumer-type: Placement answered without consumer types (it is older than microversion 1.38)")
						}
						for _, u := range g.Usages {
							rows.Add(g.ConsumerType, u.Class, u.Amount, g.Consumers)
						}
					}
					return f.Write(rows, nil)
				}
				rows := output.Rows{Headers: []string{"resource_class", "usage"}}
				for _, u := range SumByClass(groups) {
					rows.Add(u.Class, u.Amount)
				}
				return f.Write(rows, nil)
			})
		},
	}
	project.Flags().StringVar(&user, "user-id", "", "only this user's allocations")
	project.Flags().BoolVar(&byType, "by-consumer-type", false, "one row per consumer type and class, with its consumer_count (microversion 1.38+)")
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

// SumByClass is a project's usage per class whatever the consumer type:
// Placement's answer before microversion 1.38. An ungrouped answer (the
// API below 1.38) is kept as it is, in Placement's order; groups are added
// up, their classes in Placement's order (placementOrder).
func SumByClass(groups []inventory.UsageGroup) []inventory.ClassAmount {
	if len(groups) == 1 && groups[0].ConsumerType == "" {
		return groups[0].Usages
	}
	sum := map[string]int64{}
	for _, g := range groups {
		for _, u := range g.Usages {
			sum[u.Class] += u.Amount
		}
	}
	var out []inventory.ClassAmount
	for _, rc := range placementOrder(slices.Collect(maps.Keys(sum))) {
		out = append(out, inventory.ClassAmount{Class: rc, Amount: sum[rc]})
	}
	return out
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

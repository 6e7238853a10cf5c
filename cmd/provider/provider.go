// Package provider holds `rpctl provider`: list, show, create, delete, set,
// tree, its traits and aggregates, and apply (provider.yaml files).
package provider

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

// NewCmdProvider builds `rpctl provider`.
func NewCmdProvider(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "provider",
		Short: "List, show, draw, create and delete Placement resource providers, their traits and aggregates",
		Long: `Resource providers on the Placement database (the database flags) or the Placement API
(--os-cloud/--os-endpoint). P is a provider uuid or name everywhere.

` + cmdutil.StoreExitCodes,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newCmdProviderList(f), newCmdProviderShow(f), newCmdProviderTree(f), newCmdProviderCreate(f), newCmdProviderSet(f), newCmdProviderDelete(f),
		newCmdProviderNames(f, "trait"), newCmdProviderNames(f, "aggregate"))
	return c
}

var providerHeaders = []string{"uuid", "name", "generation", "root_provider_uuid", "parent_provider_uuid"}

// providerColumns are osc's: root_provider_uuid and parent_provider_uuid
// from microversion 1.14, where Placement starts to show them (on the
// database backend too when --os-placement-api-version asks for less).
func providerColumns(f *cmdutil.Factory, st inventory.Store) []string {
	if s, ok := st.(placementclient.Store); ok && !s.C.Microversion().AtLeast(14) || f.DatabaseBelow(14) {
		return providerHeaders[:3]
	}
	return providerHeaders
}

// providerRecord is one provider as a show record.
func providerRecord(f *cmdutil.Factory, st inventory.Store, p inventory.Provider) output.Rows {
	cols := providerColumns(f, st)
	return output.Record(cols, providerRow(p)[:len(cols)]...)
}

// providerRow is a provider's typed cells: a root's parent is None (null
// in json), as osc-placement prints it.
func providerRow(p inventory.Provider) []any {
	var parent any
	if p.ParentUUID != "" {
		parent = p.ParentUUID
	}
	return []any{p.UUID, p.Name, p.Generation, p.RootUUID, parent}
}

// providerJSON is a provider in JSON/YAML: a root's parent is null.
type providerJSON struct {
	UUID       string  `json:"uuid"`
	Name       string  `json:"name"`
	Generation int64   `json:"generation"`
	RootUUID   string  `json:"root_provider_uuid"`
	ParentUUID *string `json:"parent_provider_uuid"`
}

func toJSON(p inventory.Provider) providerJSON {
	j := providerJSON{UUID: p.UUID, Name: p.Name, Generation: p.Generation, RootUUID: p.RootUUID}
	if p.ParentUUID != "" {
		j.ParentUUID = &p.ParentUUID
	}
	return j
}

func newCmdProviderList(f *cmdutil.Factory) *cobra.Command {
	var fl inventory.ProviderFilter
	var inTree string
	var resource, forbidden []string
	c := &cobra.Command{
		Use:   "list",
		Short: "List resource providers (GET /resource_providers)",
		Long: `List resource providers, filtered as GET /resource_providers filters them:
  --name N  --uuid U  --in-tree P (uuid or name)  --member-of A|in:A,B|!A (repeatable, ANDed)
  --resources VCPU:2,MEMORY_MB:512  --required T,!U|in:T,U (repeatable)
osc's spellings are taken too: --resource VCPU=2 (repeatable), --forbidden T (repeatable),
and, as in osc, a comma list without in: or ! is any of them: --member-of A,B is in:A,B and
--required T,U is in:T,U (--required T,!U stays all of them).

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				if inTree != "" {
					p, err := inventory.Resolve(ctx, st, inTree)
					if err != nil {
						return err
					}
					fl.InTree = p.UUID
				}
				fl.Resources = oscResources(fl.Resources, resource)
				fl.MemberOf, fl.Required = oscAnyOf(fl.MemberOf), oscAnyOf(fl.Required)
				for _, t := range forbidden {
					fl.Required = append(fl.Required, "!"+t)
				}
				ps, err := st.ListProviders(ctx, fl)
				if err != nil {
					return err
				}
				rows := output.Rows{Headers: providerColumns(f, st)}
				for _, p := range ps {
					rows.Add(providerRow(p)[:len(rows.Headers)]...)
				}
				return f.Write(rows, nil)
			})
		},
	}
	c.Flags().StringVar(&fl.Name, "name", "", "provider name")
	c.Flags().StringVar(&fl.UUID, "uuid", "", "provider uuid")
	c.Flags().StringVar(&inTree, "in-tree", "", "only providers in the tree of this provider (uuid or name)")
	c.Flags().StringArrayVar(&fl.MemberOf, "member-of", nil, "aggregate uuid, in:A,B or !A (repeatable; ANDed)")
	c.Flags().StringVar(&fl.Resources, "resources", "", "only providers with room for these, e.g. VCPU:2,MEMORY_MB:512")
	c.Flags().StringArrayVar(&fl.Required, "required", nil, "traits: T,!U or in:T,U (repeatable)")
	c.Flags().StringArrayVar(&resource, "resource", nil, "CLASS=N, as osc's --resource (repeatable; added to --resources)")
	c.Flags().StringArrayVar(&forbidden, "forbidden", nil, "a trait the providers must not have, as osc's --forbidden (repeatable)")
	return c
}

// oscAnyOf reads a comma list as osc-placement does (it prefixes in: to
// every --member-of and to every --required holding a comma): any of them.
// A list already in Placement's syntax (in:, or a forbidden !T) is kept.
func oscAnyOf(vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if strings.Contains(v, ",") && !strings.HasPrefix(v, "in:") && !strings.Contains(v, "!") {
			v = "in:" + v
		}
		out[i] = v
	}
	return out
}

// oscResources joins osc's --resource CLASS=N flags to Placement's
// resources=CLASS:N,... form, as osc-placement does.
func oscResources(resources string, osc []string) string {
	parts := []string{}
	if resources != "" {
		parts = append(parts, resources)
	}
	for _, r := range osc {
		parts = append(parts, strings.Replace(r, "=", ":", 1))
	}
	return strings.Join(parts, ",")
}

func newCmdProviderShow(f *cmdutil.Factory) *cobra.Command {
	var allocs bool
	c := &cobra.Command{
		Use:   "show P",
		Short: "Show one resource provider (and its allocations with --allocations)",
		Long:  "Show a resource provider by uuid or name.\n\n" + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				rows := providerRecord(f, st, p)
				if !allocs {
					return f.Write(rows, nil)
				}
				_, a, err := st.ProviderAllocations(ctx, p.UUID)
				if err != nil {
					return err
				}
				rows.AddField("allocations", allocationsDict(a))
				return f.Write(rows, nil)
			})
		},
	}
	c.Flags().BoolVar(&allocs, "allocations", false, "also show the allocations against the provider, by consumer")
	return c
}

// allocationsDict is Placement's answer as osc prints it: {consumer:
// {'resources': {class: n}, 'consumer_generation': g}}, in its order.
func allocationsDict(a []inventory.ConsumerAllocations) output.Dict {
	d := output.Dict{}
	for _, c := range a {
		res := output.Dict{}
		for _, r := range c.Resources {
			res = append(res, output.Item{Key: r.Class, Value: r.Amount})
		}
		v := output.Dict{{Key: "resources", Value: res}}
		if c.Generation != nil {
			v = append(v, output.Item{Key: "consumer_generation", Value: *c.Generation})
		}
		d = append(d, output.Item{Key: c.Consumer, Value: v})
	}
	return d
}

func newCmdProviderCreate(f *cmdutil.Factory) *cobra.Command {
	var parent, uuid string
	c := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a resource provider (POST /resource_providers)",
		Long:  "Create a resource provider, a root unless --parent (uuid or name) is given.\n\n" + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				spec := inventory.ProviderSpec{Name: args[0], UUID: uuid}
				if parent != "" {
					pp, err := inventory.Resolve(ctx, st, parent)
					if err != nil {
						return err
					}
					spec.ParentUUID = pp.UUID
				}
				p, err := st.CreateProvider(ctx, spec)
				if err != nil {
					return err
				}
				return f.Write(providerRecord(f, st, p), nil)
			})
		},
	}
	c.Flags().StringVar(&parent, "parent", "", "parent provider (uuid or name)")
	c.Flags().StringVar(&parent, "parent-provider", "", "the same as --parent (osc's name)")
	c.MarkFlagsMutuallyExclusive("parent", "parent-provider")
	c.Flags().StringVar(&uuid, "uuid", "", "uuid of the new provider (default: generated)")
	return c
}

func newCmdProviderDelete(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "delete P",
		Short: "Delete a resource provider with its inventories, traits and aggregate links",
		Long: `Delete a resource provider (DELETE /resource_providers/{uuid}); Placement refuses while it
has allocations or child providers.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				return st.DeleteProvider(ctx, p.UUID)
			})
		},
	}
}

// treeNode is a provider with its inventories, usage and children.
type treeNode struct {
	providerJSON
	Inventories []shared.InventoryRow `json:"inventories"`
	Children    []*treeNode           `json:"children"`
}

func newCmdProviderTree(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "tree P",
		Short: "Draw the provider tree P belongs to, with each provider's inventories and usage",
		Long: `Draw the whole tree P belongs to (from its root), each provider with its inventories as
class used/capacity. JSON/YAML give the same tree, nested under "children"; csv and value
give one row per provider and class in the drawing's order (provider, depth, parent, class,
used, capacity, free; a provider without inventory has one row with no class).

` + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				ps, err := st.ListProviders(ctx, inventory.ProviderFilter{InTree: p.UUID})
				if err != nil {
					return err
				}
				nodes := map[string]*treeNode{}
				var root *treeNode
				for _, q := range ps {
					rows, err := shared.InventoryRows(ctx, st, q.UUID)
					if err != nil {
						return err
					}
					nodes[q.UUID] = &treeNode{providerJSON: toJSON(q), Inventories: rows, Children: []*treeNode{}}
				}
				for _, q := range ps {
					n := nodes[q.UUID]
					if par := nodes[q.ParentUUID]; par != nil {
						par.Children = append(par.Children, n)
					} else if q.ParentUUID == "" {
						root = n
					}
				}
				if root == nil {
					return fmt.Errorf("provider tree of %s has no root", inventory.Label(p))
				}
				switch f.Format {
				case output.CSV, output.Value:
					rows := output.Rows{Headers: []string{"uuid", "name", "depth", "parent_provider_uuid", "generation", "resource_class", "used", "capacity", "free"}}
					treeRows(&rows, root, 0)
					return f.Write(rows, nil)
				case output.JSON, output.YAML:
				default:
					drawTree(f.IO.Out, root, "", "")
					return nil
				}
				return f.Write(output.Rows{}, root)
			})
		},
	}
}

// treeRows lists the tree depth-first, as drawTree draws it.
func treeRows(rows *output.Rows, n *treeNode, depth int) {
	var parent any
	if n.ParentUUID != nil {
		parent = *n.ParentUUID
	}
	if len(n.Inventories) == 0 {
		rows.Add(n.UUID, n.Name, depth, parent, n.Generation, nil, nil, nil, nil)
	}
	for _, r := range n.Inventories {
		rows.Add(n.UUID, n.Name, depth, parent, n.Generation, r.ResourceClass, r.Used, r.Capacity, r.Free)
	}
	for _, ch := range n.Children {
		treeRows(rows, ch, depth+1)
	}
}

func drawTree(w io.Writer, n *treeNode, first, rest string) {
	fmt.Fprintf(w, "%s%s (%s) generation %d\n", first, n.Name, n.UUID, n.Generation)
	var lines []string
	for _, r := range n.Inventories {
		lines = append(lines, fmt.Sprintf("%s %d/%d used, %d free", r.ResourceClass, r.Used, r.Capacity, r.Free))
	}
	kids := len(n.Children)
	bar := "│ "
	if kids == 0 {
		bar = "  "
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%s%s  %s\n", rest, bar, l)
	}
	for i, ch := range n.Children {
		if i == kids-1 {
			drawTree(w, ch, rest+"└── ", rest+"    ")
		} else {
			drawTree(w, ch, rest+"├── ", rest+"│   ")
		}
	}
}

func newCmdProviderSet(f *cmdutil.Factory) *cobra.Command {
	var name, parent string
	var root bool
	c := &cobra.Command{
		Use:   "set P [--name NAME] [--parent-provider Q | --no-parent]",
		Short: "Rename or re-parent a resource provider (PUT /resource_providers/{uuid}), as osc's resource provider set",
		Long: `Rename a resource provider (--name) and move it under another provider (--parent-provider,
uuid or name) or make it a root (--no-parent), with its whole subtree, as Placement 1.37
allows. What is not named is kept. Placement refuses a name in use (409) and a parent
inside the provider's own subtree (400).

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if name == "" && parent == "" && !root {
				return cmdutil.UsageError("provider set %s: nothing to change: give --name, --parent-provider or --no-parent", args[0])
			}
			return shared.WithProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				u := inventory.ProviderUpdate{Name: p.Name}
				if name != "" {
					u.Name = name
				}
				switch {
				case root:
					none := ""
					u.ParentUUID = &none
				case parent != "":
					q, err := inventory.Resolve(ctx, st, parent)
					if err != nil {
						return err
					}
					u.ParentUUID = &q.UUID
				}
				got, err := st.UpdateProvider(ctx, p.UUID, u)
				if err != nil {
					return err
				}
				return f.Write(providerRecord(f, st, got), nil)
			})
		},
	}
	c.Flags().StringVar(&name, "name", "", "the new name")
	c.Flags().StringVar(&parent, "parent-provider", "", "the new parent (uuid or name)")
	c.Flags().StringVar(&parent, "parent", "", "the same as --parent-provider")
	c.Flags().BoolVar(&root, "no-parent", false, "make the provider a root")
	c.MarkFlagsMutuallyExclusive("parent", "parent-provider", "no-parent")
	return c
}

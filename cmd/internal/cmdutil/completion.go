package cmdutil

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// completionTimeout bounds how long a <TAB> waits for the databases.
const completionTimeout = 3 * time.Second

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// RegisterCompletions offers values for the flags of every command that has
// them, by flag name, so that commands added later get them too: formats,
// --quote, --layout, --cell (from the databases), resource classes, traits
// and provider names (from the Placement database).
func RegisterCompletions(root *cobra.Command, f *Factory) {
	fixed := func(vals ...string) completeFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		}
	}
	root.RegisterFlagCompletionFunc("format", fixed(output.Formats...))
	root.RegisterFlagCompletionFunc("quote", fixed(output.QuoteModes...))
	byName := map[string]completeFunc{
		"layout":         fixed(migrate.LayoutFlat, migrate.LayoutNested),
		"cell":           cellNames(f),
		"resources":      placementList(f, classesOf, ":"),
		"resource-class": placementValue(f, classesOf),
		"required":       placementList(f, traitsOf, ""),
		"root-required":  placementList(f, traitsOf, ""),
		"trait":          placementValue(f, traitsOf),
		"in-tree":        placementValue(f, providersOf),
		"provider":       placementValue(f, providersOf),
		// nova-manage placement audit's spelling of --provider.
		"resource_provider": placementValue(f, providersOf),
		// issue 39: a flavor's name (it may also be a file: offered when
		// no name matches) and a Nova host aggregate's name or uuid.
		"flavor":    apiNames(f, flavorNames, cobra.ShellCompDirectiveDefault),
		"aggregate": apiNames(f, aggregateNames, cobra.ShellCompDirectiveNoFileComp),
	}
	names := slices.Sorted(maps.Keys(byName))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// Looked up by name in the flags declared on c (LocalFlags would
		// merge and sort every parent's persistent flags, for each of the
		// ~80 commands: over a millisecond of every run, --version's too).
		for _, name := range names {
			if c.Flags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, byName[name])
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// databases opens what completion needs with the flags typed so far,
// quietly: a <TAB> never prints an error.
func completionDatabases(c *cobra.Command, f *Factory, need storage.Need) (*storage.Databases, context.CancelFunc, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	dbs, err := f.Databases(ctx, need, 0)
	if err != nil {
		cancel()
		return nil, nil, false
	}
	return dbs, func() { dbs.Close(); cancel() }, true
}

func cellNames(f *Factory) completeFunc {
	return func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		dbs, done, ok := completionDatabases(c, f, storage.NeedCells)
		if !ok {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer done()
		var names []string
		for _, db := range dbs.Cells {
			if strings.HasPrefix(db.Name, prefix) {
				names = append(names, db.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// apiNames completes a flag from the Nova API database the flags typed so
// far name; with none reachable it offers nothing, then dir (files for a
// flavor file).
func apiNames(f *Factory, list func(context.Context, *storage.DB) ([]string, error), dir cobra.ShellCompDirective) completeFunc {
	return func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		dbs, done, ok := completionDatabases(c, f, storage.NeedAPI)
		if !ok {
			return nil, dir
		}
		defer done()
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		names, err := list(ctx, dbs.API)
		if err != nil {
			return nil, dir
		}
		var out []string
		for _, n := range names {
			if n != "" && strings.HasPrefix(n, prefix) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out, dir
	}
}

func flavorNames(ctx context.Context, api *storage.DB) ([]string, error) {
	fl, err := apidb.ListFlavors(ctx, api, "")
	var names []string
	for _, x := range fl {
		names = append(names, x.Name)
	}
	return names, err
}

// aggregateNames are the host aggregates' names, then their uuids
// (capacity --aggregate takes either).
func aggregateNames(ctx context.Context, api *storage.DB) ([]string, error) {
	aggs, err := apidb.ListAggregates(ctx, api)
	var names, uuids []string
	for _, a := range aggs {
		names, uuids = append(names, a.Name), append(uuids, a.UUID)
	}
	return append(names, uuids...), err
}

type namesOf func(classes, traits, providers []string) []string

func classesOf(c, _, _ []string) []string { return c }

func traitsOf(_, t, _ []string) []string { return t }

func providersOf(_, _, p []string) []string { return p }

func placementNames(c *cobra.Command, f *Factory, pick namesOf) []string {
	dbs, done, ok := completionDatabases(c, f, storage.NeedPlacement)
	if !ok {
		return nil
	}
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	classes, traits, providers, err := placementdb.PlacementNames(ctx, dbs.Placement)
	if err != nil {
		return nil
	}
	if len(classes) == 0 {
		classes = placementdb.StandardResourceClasses()
	}
	return pick(classes, traits, providers)
}

// placementValue completes a flag whose value is one name.
func placementValue(f *Factory, pick namesOf) completeFunc {
	return func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, n := range placementNames(c, f, pick) {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// placementList completes the last item of a comma-separated list
// ("VCPU:2,MEM" -> "VCPU:2,MEMORY_MB:"; "!HW_" -> "!HW_CPU_X86_AVX2"), with
// suffix after each name (":" for resources, then no space).
func placementList(f *Factory, pick namesOf, suffix string) completeFunc {
	return func(c *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		head, last := "", prefix
		if i := strings.LastIndexByte(prefix, ','); i >= 0 {
			head, last = prefix[:i+1], prefix[i+1:]
		}
		for _, p := range []string{"in:", "!"} {
			if strings.HasPrefix(last, p) {
				head, last = head+p, last[len(p):]
			}
		}
		var out []string
		for _, n := range placementNames(c, f, pick) {
			if strings.HasPrefix(n, last) {
				out = append(out, head+n+suffix)
			}
		}
		slices.Sort(out)
		dir := cobra.ShellCompDirectiveNoFileComp
		if suffix != "" {
			dir |= cobra.ShellCompDirectiveNoSpace
		}
		return out, dir
	}
}

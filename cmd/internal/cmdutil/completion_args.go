package cmdutil

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/inventory"
)

// storeNames lists provider, class or trait names through the selected
// Store, so that completion works on the database and through the API.
func storeNames(f *Factory, kind string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	st, done, err := f.InventoryStore(ctx)
	if err != nil {
		return nil
	}
	defer done()
	switch kind {
	case "provider":
		ps, err := st.ListProviders(ctx, inventory.ProviderFilter{})
		if err != nil {
			return nil
		}
		names := make([]string, 0, len(ps))
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return names
	case "class":
		names, _ := st.ListResourceClasses(ctx)
		return names
	case "trait":
		names, _ := st.ListTraits(ctx, inventory.TraitFilter{})
		return names
	}
	return nil
}

// argKinds says what each positional argument of a store command names:
// P is a provider; CLASS, TRAIT a class or trait name; CLASS:field=value
// an inventory edit. repeats: the last one repeats ("..."); a word not
// known ends the list, and nothing is offered from there.
func argKinds(use string) (kinds []string, repeats bool) {
	for _, w := range strings.Fields(use)[1:] {
		w = strings.Trim(w, "[]")
		many := strings.HasSuffix(w, "...")
		w = strings.TrimSuffix(w, "...")
		switch w {
		case "P", "Q":
			kinds = append(kinds, "provider")
		case "CLASS":
			kinds = append(kinds, "class")
		case "TRAIT":
			kinds = append(kinds, "trait")
		case "CUSTOM_NAME":
			kinds = append(kinds, "custom")
		case "CLASS:field=value":
			kinds = append(kinds, "edit")
		default:
			return kinds, repeats
		}
		repeats = many
	}
	return kinds, repeats
}

// inventoryFields are the fields of CLASS:field=value.
var inventoryFields = []string{"total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"}

// completeEdit completes CLASS:field=value: a class name and ':', then a
// field and '='; the value is the operator's.
func completeEdit(f *Factory, prefix string) ([]string, cobra.ShellCompDirective) {
	dir := cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	if strings.Contains(prefix, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	if class, field, ok := strings.Cut(prefix, ":"); ok {
		for _, fl := range inventoryFields {
			if strings.HasPrefix(fl, field) {
				out = append(out, class+":"+fl+"=")
			}
		}
		return out, dir
	}
	for _, n := range storeNames(f, "class") {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n+":")
		}
	}
	return out, dir
}

// CompleteStoreArgs gives the store commands' positional arguments
// completion of provider, class and trait names.
func CompleteStoreArgs(f *Factory, cmds ...*cobra.Command) {
	for _, c := range cmds {
		CompleteStoreArgs(f, c.Commands()...)
		kinds, repeats := argKinds(c.Use)
		if len(kinds) == 0 || c.ValidArgsFunction != nil {
			continue
		}
		for i, k := range kinds {
			if k != "custom" {
				continue
			}
			// delete CUSTOM_NAME names an existing class or trait; create
			// a new one, which nothing can complete.
			switch {
			case c.Name() == "create" || c.Parent() == nil:
				kinds = kinds[:i]
			case c.Parent().Name() == "resource-class":
				kinds[i] = "class"
			default:
				kinds[i] = "trait"
			}
			break
		}
		if len(kinds) == 0 {
			continue
		}
		c.ValidArgsFunction = func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			k := kinds[min(len(args), len(kinds)-1)]
			if len(args) >= len(kinds) && !repeats {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			if k == "edit" {
				return completeEdit(f, prefix)
			}
			var out []string
			for _, n := range storeNames(f, k) {
				if strings.HasPrefix(n, prefix) {
					out = append(out, n)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
	}
}

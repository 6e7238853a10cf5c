package shared

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/output"
)

// NameRows prints a list of names under one column.
func NameRows(f *cmdutil.Factory, header string, names []string) error {
	rows := output.Rows{Headers: []string{header}}
	for _, n := range names {
		rows.Add(n)
	}
	return f.Write(rows, nil)
}

// SetOrder orders the names `set` leaves as the answer to Placement's PUT,
// which osc's trait set and aggregate set print, lists them: traits as
// the traits table is read by name (placement/objects/trait.py, name_in),
// aggregates in the order the request gave them.
func SetOrder(kind string, names, given []string) []string {
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
	for _, n := range NameOrder(kind, names) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// NameOrder sorts the names an edit leaves (set, add, remove) as Placement
// would list them (the list command prints the store's own order, which is
// Placement's): standard traits, synced in name order, by id, then custom
// ones, created later (by name: the API does not show their ids);
// aggregates by uuid.
func NameOrder(kind string, names []string) []string {
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

// FewNames lists at most n names, "a, b and 3 more" (one host: "host a";
// several: "hosts a, b").
func FewNames(names []string, n int) string {
	word := "hosts "
	if len(names) == 1 {
		word = "host "
	}
	if len(names) <= n {
		return word + strings.Join(names, ", ")
	}
	return word + strings.Join(names[:n], ", ") + " and " + strconv.Itoa(len(names)-n) + " more"
}

package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/internal/flagnum"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/inventory"
)

// inventoryRow is one class of `inventory list`: osc-placement's columns,
// then capacity and free.
type inventoryRow struct {
	ResourceClass   string `json:"resource_class"`
	AllocationRatio ratio  `json:"allocation_ratio"`
	MinUnit         int64  `json:"min_unit"`
	MaxUnit         int64  `json:"max_unit"`
	Reserved        int64  `json:"reserved"`
	StepSize        int64  `json:"step_size"`
	Total           int64  `json:"total"`
	Used            int64  `json:"used"`
	Capacity        int64  `json:"capacity"`
	Free            int64  `json:"free"`
}

var inventoryHeaders = []string{"resource_class", "allocation_ratio", "min_unit", "max_unit", "reserved", "step_size", "total", "used", "capacity", "free"}

// cells are the row's typed cells, in inventoryHeaders' order.
func (r inventoryRow) cells() []any {
	return []any{r.ResourceClass, float64(r.AllocationRatio), r.MinUnit, r.MaxUnit, r.Reserved, r.StepSize,
		r.Total, r.Used, r.Capacity, r.Free}
}

// ratio is an allocation ratio, printed in JSON as Python prints a float
// (4.0, not 4), as osc-placement does.
type ratio float64

// MarshalJSON writes Python's repr of the float.
func (r ratio) MarshalJSON() ([]byte, error) { return []byte(pyFloat(float64(r))), nil }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// pyFloat prints a float as Python's repr does (4.0, 1.1, 1e+20).
func pyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

func newRow(class string, v inventory.Inventory, used int64) inventoryRow {
	return inventoryRow{ResourceClass: class, AllocationRatio: ratio(v.AllocationRatio), MinUnit: v.MinUnit, MaxUnit: v.MaxUnit,
		Reserved: v.Reserved, StepSize: v.StepSize, Total: v.Total, Used: used, Capacity: v.Capacity(), Free: v.Capacity() - used}
}

// inventoryRows reads a provider's inventories with their usage, by class.
func inventoryRows(ctx context.Context, st inventory.Store, uuid string) ([]inventoryRow, error) {
	_, inv, err := st.ListInventories(ctx, uuid)
	if err != nil {
		return nil, err
	}
	_, usage, err := st.Usages(ctx, uuid)
	if err != nil {
		return nil, err
	}
	rows := []inventoryRow{}
	for _, v := range inv {
		rows = append(rows, newRow(v.Class, v.Inventory, usage[v.Class]))
	}
	return rows, nil
}

// NewCmdInventory builds `rpctl inventory`.
func NewCmdInventory(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "inventory",
		Short: "List, show, set and delete resource provider inventories, generation-safe",
		Long: `Inventories of resource providers on the Placement database (the database flags) or the
Placement API (--os-cloud/--os-endpoint). Every write is generation-checked: read, edit,
write with the generation read; on a conflict rpctl re-reads and re-applies the same edit,
up to --attempts times, and reports a conflict that persists instead of forcing it.

` + storeExitCodes,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newCmdInventoryList(f), newCmdInventoryShow(f), newCmdInventorySet(f), newCmdInventoryDelete(f))
	return c
}

func newCmdInventoryList(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "list P",
		Short: "List a provider's inventories with used, capacity and free",
		Long: `List a provider's inventories: osc-placement's columns (resource_class, allocation_ratio,
min_unit, max_unit, reserved, step_size, total, used) plus capacity
(int((total - reserved) * allocation_ratio), as Placement computes it) and free
(capacity - used; negative when capacity was lowered below usage).

` + storeExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				rows, err := inventoryRows(ctx, st, p.UUID)
				if err != nil {
					return err
				}
				out := output.Rows{Headers: inventoryHeaders}
				for _, r := range rows {
					out.Add(r.cells()...)
				}
				return f.Write(out, nil)
			})
		},
	}
}

func newCmdInventoryShow(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show P CLASS",
		Short: "Show one inventory of a provider",
		Long:  "Show one inventory record with used, capacity and free.\n\n" + storeExitCodes,
		Args:  cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return withProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
				rows, err := inventoryRows(ctx, st, p.UUID)
				if err != nil {
					return err
				}
				for _, r := range rows {
					if r.ResourceClass == args[1] {
						return f.Write(output.Record(inventoryHeaders, r.cells()...), nil)
					}
				}
				return inventory.Errorf(inventory.ErrNotFound, "", "No inventory of class %s for %s", args[1], p.UUID)
			})
		},
	}
}

// InventorySetOptions are the flags of `rpctl inventory set`.
type InventorySetOptions struct {
	Resources []string
	Amend     bool
	DryRun    bool
	Yes       bool
	Aggregate bool
	Attempts  int
	Parallel  int
}

func newCmdInventorySet(f *Factory) *cobra.Command {
	o := &InventorySetOptions{}
	c := &cobra.Command{
		Use:   "set P CLASS:field=value...",
		Short: "Set inventories (replace, or --amend), generation-checked, with --dry-run and --aggregate",
		Long: `Set a provider's inventories. Each argument is CLASS:field=value (fields: total, reserved,
min_unit, max_unit, step_size, allocation_ratio) or CLASS=N for the total, e.g.
  rpctl inventory set cn1 VCPU:allocation_ratio=4.0 MEMORY_MB:reserved=2048 --amend

Without --amend the provider ends with exactly the classes named, each with the fields
given and Placement's defaults for the rest (as osc-placement does), so every class needs
a total and classes not named are REMOVED: on a terminal rpctl first shows what would be
removed and asks, unless --yes. With --amend only the named fields change.

Checked before writing: Placement's limits on every field (total 1..2147483647, reserved
0..2147483647, min_unit/max_unit/step_size 1..2147483647, allocation_ratio at most
3.40282e+38), reserved not above total, and min_unit not above max_unit (rpctl's own rule:
no allocation could fit). Removing a class that has allocations is refused (exit 2).
Lowering capacity below usage is allowed, as in Placement, with a warning on standard
error naming the class, its usage and the new capacity.

--dry-run prints each change (class, before -> after) and writes nothing. An edit that
changes nothing writes nothing (the generation stays).

Usage is read only when a change removes a class or lowers its capacity ((total -
reserved) x allocation_ratio), the cases Placement's rules depend on; the used column then
shows it for each change of that provider, and is blank (null in json/yaml) otherwise. With
--aggregate (without --dry-run) a lowered capacity is checked after the writes: one listing
per class of the aggregate's providers with room for one more unit, and usage read (and
shown) only for the providers missing from it.

--aggregate: P is an aggregate uuid; the edit is applied to every member provider, each in
its own generation-checked write (--parallel at a time, on one keep-alive connection pool),
with progress on a terminal and a summary of changed / unchanged / conflicts / failed.
Every provider is read and checked before any is written; each write then uses that read's
generation (one GET inventories and one PUT per provider, plus GET usages to remove a class), and
a provider changed since is re-read and the edit re-applied. Through the API, --parallel
above the number of placement-api worker processes is slower, not faster, when uWSGI serves
HTTP/1.1 itself (--http11-socket): each worker stays on one keep-alive connection, and the
requests on the connections beyond the workers wait in its accept queue.

` + storeExitCodes + `
With --aggregate: 0 every provider changed or unchanged, 1 some conflicted or failed (the
others are written), 2 invalid edit.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// osc's spelling: --resource CLASS=N / CLASS:field=V.
			specs := append(args[1:], o.Resources...)
			if len(specs) == 0 {
				return usageError("inventory set %s: name at least one CLASS=TOTAL or CLASS:field=VALUE (or --resource)", args[0])
			}
			edits, err := inventory.ParseEdits(specs)
			if err != nil {
				return usageError("%v", err)
			}
			if err := checkCounts(count{"parallel", o.Parallel}, count{"attempts", o.Attempts}); err != nil {
				return err
			}
			return withStore(c, f, func(ctx context.Context, st inventory.Store) error {
				return runInventorySet(ctx, f, st, o, args[0], inventory.SetEdit(edits, o.Amend))
			})
		},
	}
	fl := c.Flags()
	fl.BoolVar(&o.Amend, "amend", false, "change only the named fields; keep every other class and field")
	fl.StringArrayVar(&o.Resources, "resource", nil, "CLASS=TOTAL or CLASS:field=VALUE, as osc's --resource (repeatable; the same as positional edits)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "print the changes (outcome \"would change\") and write nothing; with --verbose also the PUT requests on standard error")
	fl.BoolVarP(&o.Yes, "yes", "y", false, "do not ask before removing classes")
	fl.BoolVar(&o.Aggregate, "aggregate", false, "P is an aggregate uuid: edit every member provider")
	fl.IntVar(&o.Attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts per provider before a generation conflict is reported")
	fl.IntVar(&o.Parallel, "parallel", 2, "with --aggregate: providers edited at once (through the API: at most placement-api's worker processes, see above)")
	return c
}

// changeRow is one line of a set/delete report.
type changeRow struct {
	Provider      string               `json:"resource_provider"`
	Name          string               `json:"name"`
	Outcome       inventory.Outcome    `json:"outcome"`
	ResourceClass string               `json:"resource_class"`
	Before        *inventory.Inventory `json:"before"`
	After         *inventory.Inventory `json:"after"`
	// Used is nil (null) when the edit did not read usage.
	Used       *int64 `json:"used"`
	Generation int64  `json:"generation"`
	// RequestBody is, with --dry-run, the PUT body that would be sent.
	RequestBody json.RawMessage `json:"request_body,omitempty"`
}

// putBody is PUT /resource_providers/{uuid}/inventories' body.
func putBody(gen int64, want map[string]inventory.Inventory) json.RawMessage {
	type rec struct {
		Total           int64 `json:"total"`
		Reserved        int64 `json:"reserved"`
		MinUnit         int64 `json:"min_unit"`
		MaxUnit         int64 `json:"max_unit"`
		StepSize        int64 `json:"step_size"`
		AllocationRatio ratio `json:"allocation_ratio"`
	}
	body := struct {
		Generation  int64          `json:"resource_provider_generation"`
		Inventories map[string]rec `json:"inventories"`
	}{gen, map[string]rec{}}
	for rc, v := range want {
		body.Inventories[rc] = rec{v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, ratio(v.AllocationRatio)}
	}
	b, _ := json.Marshal(body)
	return b
}

// describe prints the fields of a change: all of them for an added or
// removed class, only those that differ otherwise.
func describe(before, after *inventory.Inventory) (string, string) {
	fields := func(v *inventory.Inventory) []string {
		if v == nil {
			return nil
		}
		return []string{"total=" + itoa(v.Total), "reserved=" + itoa(v.Reserved), "min_unit=" + itoa(v.MinUnit), "max_unit=" + itoa(v.MaxUnit),
			"step_size=" + itoa(v.StepSize), "allocation_ratio=" + pyFloat(v.AllocationRatio)}
	}
	b, a := fields(before), fields(after)
	if b != nil && a != nil {
		var bs, as []string
		for i := range b {
			if b[i] != a[i] {
				bs, as = append(bs, b[i]), append(as, a[i])
			}
		}
		b, a = bs, as
	}
	join := func(s []string) string {
		if s == nil {
			return "-"
		}
		return strings.Join(s, " ")
	}
	return join(b), join(a)
}

func runInventorySet(ctx context.Context, f *Factory, st inventory.Store, o *InventorySetOptions, ref string, edit inventory.InventoryEdit) error {
	var providers []inventory.Provider
	if o.Aggregate {
		ps, err := st.ListProviders(ctx, inventory.ProviderFilter{MemberOf: []string{ref}})
		if err != nil {
			return err
		}
		providers = ps
	} else {
		p, err := inventory.Resolve(ctx, st, ref)
		if err != nil {
			return err
		}
		providers = []inventory.Provider{p}
	}
	// An aggregate's lowered capacity is checked against usage after the
	// writes, with one listing per class (CheckLowered), not one usage read
	// per provider; --dry-run has no writes to check after, so it reads.
	ed := &inventory.Editor{Store: st, Attempts: o.Attempts, DryRun: o.DryRun, LowerLater: o.Aggregate && !o.DryRun}
	if !o.Yes && !o.DryRun && f.IO.IsStdinTTY() {
		var mu sync.Mutex
		ed.Confirm = func(p inventory.Provider, changes []inventory.Change) (bool, error) {
			removed := inventory.Removed(changes)
			if len(removed) == 0 {
				return true, nil
			}
			mu.Lock()
			defer mu.Unlock()
			return confirm(f, fmt.Sprintf("%s: this removes %s (not named; use --amend to keep them). Continue? [y/N] ",
				inventory.Label(p), strings.Join(removed, ", ")))
		}
	}
	var plans []inventory.Result
	if len(providers) > 1 && !o.DryRun {
		// A batch validates every provider's records before it writes any:
		// a record refused on the tenth provider must not leave nine written.
		// The writes then start from these reads (a provider changed since
		// is a generation conflict, re-read then), not from a second GET.
		plans = editAll(ctx, f, providers, o.Parallel, false, func(i int) inventory.Result {
			return ed.Plan(ctx, providers[i], edit)
		})
		var bad []string
		for _, r := range plans {
			if r.Outcome == inventory.Failed && (errors.Is(r.Err, inventory.ErrBadRequest) || errors.Is(r.Err, inventory.ErrInUse)) {
				bad = append(bad, r.Err.Error())
			}
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if len(bad) > 0 {
			for _, b := range bad {
				fmt.Fprintln(f.IO.ErrOut, b)
			}
			return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%d of %d providers would get records Placement refuses; nothing written", len(bad), len(providers))}
		}
	}
	results := editAll(ctx, f, providers, o.Parallel, o.Aggregate, func(i int) inventory.Result {
		if plans != nil {
			return ed.Write(ctx, plans[i], edit)
		}
		return ed.EditInventories(ctx, providers[i], edit)
	})
	if ed.LowerLater {
		if err := ed.CheckLowered(ctx, ref, results); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "warning: the edits are written, but their usage could not be checked against the lowered capacities: %v\n", err)
		}
	}

	rows := output.Rows{Headers: []string{"resource_provider", "name", "outcome", "resource_class", "before", "after", "used", "generation"}}
	data := []changeRow{}
	counts := map[inventory.Outcome]int{}
	var errs []error
	var requests []string
	for _, r := range results {
		counts[r.Outcome]++
		for _, w := range r.Warnings {
			fmt.Fprintln(f.IO.ErrOut, "warning: "+w)
		}
		if r.Err != nil {
			errs = append(errs, r.Err)
			if o.Aggregate {
				fmt.Fprintf(f.IO.ErrOut, "%s: %s: %v\n", r.Outcome, inventory.Label(r.Provider), r.Err)
			}
			continue
		}
		outcome := r.Outcome
		var body json.RawMessage
		if o.DryRun && outcome == inventory.Changed {
			outcome = "would change"
			body = putBody(r.Generation, r.Want)
			requests = append(requests, fmt.Sprintf("PUT /resource_providers/%s/inventories %s", r.Provider.UUID, body))
		}
		for _, ch := range r.Changes {
			b, a := describe(ch.Before, ch.After)
			rows.Rows = append(rows.Rows, []string{r.Provider.UUID, r.Provider.Name, string(outcome), ch.Class, b, a, usedCell(ch.Used), itoa(r.Generation)})
			data = append(data, changeRow{r.Provider.UUID, r.Provider.Name, outcome, ch.Class, ch.Before, ch.After, ch.Used, r.Generation, body})
		}
		if len(r.Changes) == 0 {
			rows.Rows = append(rows.Rows, []string{r.Provider.UUID, r.Provider.Name, string(outcome), "", "", "", "", itoa(r.Generation)})
			data = append(data, changeRow{Provider: r.Provider.UUID, Name: r.Provider.Name, Outcome: outcome, Generation: r.Generation})
		}
	}
	if len(rows.Rows) > 0 || len(errs) == 0 {
		if err := f.Write(rows, data); err != nil {
			return err
		}
	}
	if f.IO.Verbose {
		// What --dry-run would send, the same request for both backends:
		// a diagnostic (stdout keeps the rows; json/yaml carry it as
		// request_body).
		for _, r := range requests {
			fmt.Fprintln(f.IO.ErrOut, "would send: "+r)
		}
	}
	if o.Aggregate {
		changed := "changed"
		if o.DryRun {
			changed = "would change"
		}
		fmt.Fprintf(f.IO.ErrOut, "%d providers: %d %s, %d unchanged, %d conflicts, %d failed\n", len(providers),
			counts[inventory.Changed], changed, counts[inventory.Unchanged], counts[inventory.Conflict], counts[inventory.Failed])
		if len(errs) > 0 {
			return Exit(exitIncomplete)
		}
		return nil
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// editAll runs one(i) for every provider, parallel at a time, with a
// progress line for an aggregate.
func editAll(ctx context.Context, f *Factory, providers []inventory.Provider, parallel int, showProgress bool, one func(i int) inventory.Result) []inventory.Result {
	results := make([]inventory.Result, len(providers))
	var prog *progress
	if showProgress {
		prog = newProgressOf(f.IO.ErrOut, f.IO.IsStderrTTY(), "inventory set", "providers")
	}
	var doneMu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(parallel, max(len(providers), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = one(i)
				if prog != nil {
					doneMu.Lock()
					done++
					prog.update(done, len(providers))
					doneMu.Unlock()
				}
			}
		}()
	}
	for i := range providers {
		next <- i
	}
	close(next)
	wg.Wait()
	if prog != nil {
		prog.clear()
	}

	return results
}

// usedCell is a change's used column: blank when usage was not read.
func usedCell(used *int64) string {
	if used == nil {
		return ""
	}
	return itoa(*used)
}

// count is an integer flag that must be at least 1.
type count struct {
	flag string
	n    int
}

// checkCounts refuses, as invalid input (2, nothing written), a count flag
// below 1: the editor would otherwise take 0 attempts for its default.
func checkCounts(cs ...count) error {
	for _, c := range cs {
		if err := flagnum.InRange(c.flag, int64(c.n), 1, math.MaxInt32); err != nil {
			return usageError("%v", err)
		}
	}
	return nil
}

// confirm asks on the terminal; anything but y/yes declines.
func confirm(f *Factory, question string) (bool, error) {
	fmt.Fprint(f.IO.ErrOut, question)
	line, err := bufio.NewReader(f.IO.In).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

func newCmdInventoryDelete(f *Factory) *cobra.Command {
	var attempts int
	var classFlags []string
	c := &cobra.Command{
		Use:   "delete P [CLASS...] [--resource-class CLASS]...",
		Short: "Delete inventories of a provider, or all of them (refused while they have allocations)",
		Long: `Delete the named inventory classes of a provider in one generation-checked write; with no
class named, every inventory of the provider, as osc's 'resource provider inventory delete P'
(DELETE /resource_providers/{uuid}/inventories). --resource-class is osc's spelling of a class.
Placement refuses to delete an inventory that has allocations (exit 2).

` + storeExitCodes,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			classes := append(args[1:], classFlags...)
			for _, rc := range classes {
				if err := inventory.CheckClassName(rc); err != nil {
					return usageError("%v", err)
				}
			}
			if err := checkCounts(count{"attempts", attempts}); err != nil {
				return err
			}
			edit := inventory.DeleteEdit(classes)
			if len(classes) == 0 {
				edit = inventory.DeleteAllEdit()
			}
			return withStore(c, f, func(ctx context.Context, st inventory.Store) error {
				o := &InventorySetOptions{Yes: true, Attempts: attempts, Parallel: 1}
				return runInventorySet(ctx, f, st, o, args[0], edit)
			})
		},
	}
	c.Flags().IntVar(&attempts, "attempts", inventory.DefaultAttempts, "read-edit-write attempts before a generation conflict is reported")
	c.Flags().StringArrayVar(&classFlags, "resource-class", nil, "a class to delete, as osc's --resource-class (repeatable)")
	return c
}

// NewCmdUsage builds `rpctl usage`.
func NewCmdUsage(f *Factory) *cobra.Command {
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

` + storeExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withStore(c, f, func(ctx context.Context, st inventory.Store) error {
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
		Long:  "Show the sum of allocations of every class the provider has inventory of.\n\n" + storeExitCodes,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withProvider(c, f, args[0], func(ctx context.Context, st inventory.Store, p inventory.Provider) error {
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

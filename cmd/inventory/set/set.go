// Package set holds `rpctl inventory set` (one provider or an aggregate's,
// generation-checked, with retries), whose engine `inventory delete` runs too.
package set

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
)

// InventorySetOptions are the flags of `rpctl inventory set`.
type InventorySetOptions struct {
	Resources []string
	Amend     bool
	DryRun    bool
	Yes       bool
	Aggregate bool
	Attempts  int
	Parallel  int
	// Changes prints rpctl's change log instead of osc's output.
	Changes bool
	// Silent: osc prints nothing for this write (inventory delete), so
	// rpctl prints nothing unless Changes.
	Silent bool
	// order is the classes of the edit in the order first named: osc sends
	// (and prints) the classes it was given in that order.
	order []string
}

// ChangesHelp is the --changes flag's help, one text for every write that
// prints osc's output by default.
const ChangesHelp = "print rpctl's change log (resource_provider, name, outcome, resource_class, before, after, used, generation) instead of what osc-placement prints"

func NewCmdInventorySet(f *cmdutil.Factory) *cobra.Command {
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
3.40282e+38), reserved not above total, and rpctl's own rules: min_unit not above max_unit
(no allocation could fit) and allocation_ratio above 0 (Placement stores 0, but its capacity
is 0 and Nova reads a 0.0 ratio as unset). Removing a class that has allocations is refused (exit 2).
Lowering capacity below usage is allowed, as in Placement, with a warning on standard
error naming the class, its usage and the new capacity.

Output: what osc-placement's resource provider inventory set prints for the same command
and format: every inventory the provider is left with (resource_class, allocation_ratio,
min_unit, max_unit, reserved, step_size, total; with --aggregate resource_provider first),
in the order osc sends them (with --amend the classes read, in Placement's order, then new
ones as named; without, as named). --changes prints rpctl's change log instead: one row per
changed class (outcome, before, after, used, generation). Where rpctl deliberately differs
from osc: an edit that changes nothing writes nothing (the generation stays; osc writes),
--dry-run prints the change log (osc prints its request body), and with --aggregate the
providers written are printed even when others failed (osc prints nothing then; both exit
non-zero).

--dry-run prints each change (class, before -> after) and writes nothing.

Usage is read only when a change removes a class or lowers its capacity ((total -
reserved) x allocation_ratio), the cases Placement's rules depend on; with --changes the
used column then shows it for each change of that provider, and is blank (null in
json/yaml) otherwise. With
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

` + cmdutil.OSCExitCodes + "\n" + cmdutil.StoreExitCodes + `
With --aggregate: 0 every provider changed or unchanged, 1 some conflicted or failed (the
others are written), 2 invalid edit.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// osc's spelling: --resource CLASS=N / CLASS:field=V.
			specs := append(args[1:], o.Resources...)
			if len(specs) == 0 {
				return cmdutil.UsageError("inventory set %s: name at least one CLASS=TOTAL or CLASS:field=VALUE (or --resource)", args[0])
			}
			edits, err := inventory.ParseEdits(specs)
			if err != nil {
				return cmdutil.UsageError("%v", err)
			}
			for _, e := range edits {
				if !slices.Contains(o.order, e.Class) {
					o.order = append(o.order, e.Class)
				}
			}
			if err := shared.CheckCounts(shared.Count{Flag: "parallel", N: o.Parallel}, shared.Count{Flag: "attempts", N: o.Attempts}); err != nil {
				return err
			}
			return shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				return RunInventorySet(ctx, f, st, o, args[0], inventory.SetEdit(edits, o.Amend))
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
	fl.BoolVar(&o.Changes, "changes", false, ChangesHelp)
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
		Total           int64        `json:"total"`
		Reserved        int64        `json:"reserved"`
		MinUnit         int64        `json:"min_unit"`
		MaxUnit         int64        `json:"max_unit"`
		StepSize        int64        `json:"step_size"`
		AllocationRatio shared.Ratio `json:"allocation_ratio"`
	}
	body := struct {
		Generation  int64          `json:"resource_provider_generation"`
		Inventories map[string]rec `json:"inventories"`
	}{gen, map[string]rec{}}
	for rc, v := range want {
		body.Inventories[rc] = rec{v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, shared.Ratio(v.AllocationRatio)}
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
		return []string{"total=" + shared.Itoa(v.Total), "reserved=" + shared.Itoa(v.Reserved), "min_unit=" + shared.Itoa(v.MinUnit), "max_unit=" + shared.Itoa(v.MaxUnit),
			"step_size=" + shared.Itoa(v.StepSize), "allocation_ratio=" + shared.PyFloat(v.AllocationRatio)}
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

func RunInventorySet(ctx context.Context, f *cmdutil.Factory, st inventory.Store, o *InventorySetOptions, ref string, edit inventory.InventoryEdit) error {
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
			return cmdutil.Confirm(f, fmt.Sprintf("%s: this removes %s (not named; use --amend to keep them). Continue? [y/N] ",
				inventory.Label(p), strings.Join(removed, ", ")))
		}
	}
	var plans []inventory.Result
	if len(providers) > 1 && !o.DryRun {
		// A batch validates every provider's records before it writes any:
		// a record refused on the tenth provider must not leave nine written.
		// The writes then start from these reads (a provider changed since
		// is a generation conflict, re-read then), not from a second GET.
		var batched bool
		if plans, batched = ed.PlanAll(ctx, providers, edit); !batched {
			plans = editAll(ctx, f, providers, o.Parallel, false, func(i int) inventory.Result {
				return ed.Plan(ctx, providers[i], edit)
			})
		}
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
			return &cmdutil.ExitError{Code: cmdutil.ExitFailed, Err: fmt.Errorf("%d of %d providers would get records Placement refuses; nothing written", len(bad), len(providers))}
		}
	}
	var results []inventory.Result
	if plans != nil {
		// The database writes many providers per round trip.
		results, _ = ed.WriteAll(ctx, plans, edit)
	}
	if results == nil {
		results = editAll(ctx, f, providers, o.Parallel, o.Aggregate, func(i int) inventory.Result {
			if plans != nil {
				return ed.Write(ctx, plans[i], edit)
			}
			return ed.EditInventories(ctx, providers[i], edit)
		})
	}
	if ed.LowerLater {
		if err := ed.CheckLowered(ctx, ref, results); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "warning: the edits are written, but their usage could not be checked against the lowered capacities: %v\n", err)
		}
	}

	if o.Changes || o.DryRun {
		return printChanges(f, o, results, len(providers))
	}
	return printOSC(f, o, results, len(providers))
}

// printChanges prints rpctl's change log (--changes, --dry-run): one row
// per changed class, before and after.
func printChanges(f *cmdutil.Factory, o *InventorySetOptions, results []inventory.Result, nProviders int) error {
	rows := output.Rows{Headers: []string{"resource_provider", "name", "outcome", "resource_class", "before", "after", "used", "generation"}}
	data := []changeRow{}
	counts := map[inventory.Outcome]int{}
	var errs []error
	var requests []string
	for _, r := range results {
		if !tally(f, o, r, counts, &errs) {
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
			rows.Rows = append(rows.Rows, []string{r.Provider.UUID, r.Provider.Name, string(outcome), ch.Class, b, a, usedCell(ch.Used), shared.Itoa(r.Generation)})
			data = append(data, changeRow{r.Provider.UUID, r.Provider.Name, outcome, ch.Class, ch.Before, ch.After, ch.Used, r.Generation, body})
		}
		if len(r.Changes) == 0 {
			rows.Rows = append(rows.Rows, []string{r.Provider.UUID, r.Provider.Name, string(outcome), "", "", "", "", shared.Itoa(r.Generation)})
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
	changed := "changed"
	if o.DryRun {
		changed = "would change"
	}
	return finish(f, o, counts, errs, nProviders, changed)
}

// tally counts r's outcome and prints its warnings and, with --aggregate,
// its error (the provider goes on the summary's count); false when r has
// no rows to print.
func tally(f *cmdutil.Factory, o *InventorySetOptions, r inventory.Result, counts map[inventory.Outcome]int, errs *[]error) bool {
	counts[r.Outcome]++
	for _, w := range r.Warnings {
		fmt.Fprintln(f.IO.ErrOut, "warning: "+w)
	}
	if r.Err == nil {
		return true
	}
	*errs = append(*errs, r.Err)
	if o.Aggregate {
		fmt.Fprintf(f.IO.ErrOut, "%s: %s: %v\n", r.Outcome, inventory.Label(r.Provider), r.Err)
	}
	return false
}

// finish is both printers' end: --aggregate's summary line (changed words
// the changed count) and its exit code, else the first error.
func finish(f *cmdutil.Factory, o *InventorySetOptions, counts map[inventory.Outcome]int, errs []error, nProviders int, changed string) error {
	if o.Aggregate {
		fmt.Fprintf(f.IO.ErrOut, "%d providers: %d %s, %d unchanged, %d conflicts, %d failed\n", nProviders,
			counts[inventory.Changed], changed, counts[inventory.Unchanged], counts[inventory.Conflict], counts[inventory.Failed])
		if len(errs) > 0 {
			return cmdutil.Exit(cmdutil.ExitStoreIncomplete)
		}
		return nil
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// printOSC prints what osc-placement prints for the same write: nothing
// (inventory delete), or every inventory the provider is left with, in the
// order osc sends them in its PUT and Placement answers them — with
// --amend the classes read in the order read, then new ones in the order
// named; without, the classes in the order named. An edit that changed
// nothing (rpctl writes nothing then) prints the same records. Warnings,
// errors and the --aggregate summary go to standard error as with
// --changes.
func printOSC(f *cmdutil.Factory, o *InventorySetOptions, results []inventory.Result, nProviders int) error {
	headers := []string{"resource_class", "allocation_ratio", "min_unit", "max_unit", "reserved", "step_size", "total"}
	if o.Aggregate {
		headers = append([]string{"resource_provider"}, headers...)
	}
	// Typed cells, no data: json and yaml follow -c as osc's do, and print
	// the ratio as a float (4.0).
	rows := output.Rows{Headers: headers}
	counts := map[inventory.Outcome]int{}
	var errs []error
	for _, r := range results {
		if !tally(f, o, r, counts, &errs) {
			continue
		}
		var classes []string
		if o.Amend {
			classes = slices.Clone(r.Order)
		}
		classes = append(classes, o.order...)
		classes = append(classes, slices.Sorted(maps.Keys(r.Want))...) // none left: every class is read or named
		seen := map[string]bool{}
		for _, rc := range classes {
			v, ok := r.Want[rc]
			if !ok || seen[rc] {
				continue
			}
			seen[rc] = true
			cells := []any{rc, v.AllocationRatio, v.MinUnit, v.MaxUnit, v.Reserved, v.StepSize, v.Total}
			if o.Aggregate {
				cells = append([]any{r.Provider.UUID}, cells...)
			}
			rows.Add(cells...)
		}
	}
	if !o.Silent && (len(rows.Rows) > 0 || len(errs) == 0) {
		if err := f.Write(rows, nil); err != nil {
			return err
		}
	}
	return finish(f, o, counts, errs, nProviders, "changed")
}

// editAll runs one(i) for every provider, parallel at a time, with a
// Progress line for an aggregate.
func editAll(ctx context.Context, f *cmdutil.Factory, providers []inventory.Provider, parallel int, showProgress bool, one func(i int) inventory.Result) []inventory.Result {
	results := make([]inventory.Result, len(providers))
	var prog *cmdutil.Progress
	if showProgress {
		prog = cmdutil.NewProgressOf(f.IO.ErrOut, f.IO.IsStderrTTY(), "inventory set", "providers")
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
					prog.Update(done, len(providers))
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
		prog.Clear()
	}

	return results
}

// usedCell is a change's used column: blank when usage was not read.
func usedCell(used *int64) string {
	if used == nil {
		return ""
	}
	return shared.Itoa(*used)
}

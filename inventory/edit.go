package inventory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/flagnum"
)

// Resolve finds a provider by uuid or, failing that, by name (names may
// look like uuids).
func Resolve(ctx context.Context, st Store, ref string) (Provider, error) {
	if candidates.UUIDLike(ref) {
		p, err := st.GetProvider(ctx, ref)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return p, err
		}
	}
	ps, err := st.ListProviders(ctx, ProviderFilter{Name: ref})
	if err != nil {
		return Provider{}, err
	}
	if len(ps) == 0 {
		return Provider{}, Errorf(ErrNotFound, "", "no resource provider with uuid or name %q", ref)
	}
	return ps[0], nil
}

// Fields are the inventory fields an edit may set, in Placement's order.
var Fields = []string{"total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"}

// FieldEdit sets one field of one class: `VCPU:allocation_ratio=4.0`, or
// `VCPU=8` for the total (osc-placement's shorthand).
type FieldEdit struct {
	Class, Field string
	Int          int64
	Float        float64 // allocation_ratio
}

// ParseEdits parses CLASS:field=value arguments. The error names the
// argument.
func ParseEdits(args []string) ([]FieldEdit, error) {
	var out []FieldEdit
	for _, a := range args {
		key, val, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%q: expected CLASS:field=value (e.g. VCPU:allocation_ratio=4.0) or CLASS=total", a)
		}
		class, field, hasField := strings.Cut(key, ":")
		if !hasField {
			field = "total"
		}
		if err := CheckClassName(class); err != nil {
			return nil, fmt.Errorf("%q: %v", a, err)
		}
		if !slices.Contains(Fields, field) {
			return nil, fmt.Errorf("%q: unknown field %q (fields: %s)", a, field, strings.Join(Fields, ", "))
		}
		e := FieldEdit{Class: class, Field: field}
		var err error
		if field == "allocation_ratio" {
			// The range is Validate's; here only a finite decimal number
			// passes (strconv alone takes nan, inf and hexadecimal).
			if e.Float, err = flagnum.Ratio(field, val, math.MaxFloat64); err != nil {
				return nil, fmt.Errorf("%q: allocation_ratio must be a finite, non-negative decimal number, got %q", a, val)
			}
		} else {
			e.Int, err = strconv.ParseInt(val, 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("%q: %s must be a number, got %q", a, field, val)
		}
		out = append(out, e)
	}
	return out, nil
}

func (e FieldEdit) apply(v *Inventory) {
	switch e.Field {
	case "total":
		v.Total = e.Int
	case "reserved":
		v.Reserved = e.Int
	case "min_unit":
		v.MinUnit = e.Int
	case "max_unit":
		v.MaxUnit = e.Int
	case "step_size":
		v.StepSize = e.Int
	case "allocation_ratio":
		v.AllocationRatio = e.Float
	}
}

// Apply computes the inventories an edit leaves. With amend, the named
// fields of the named classes change and everything else stays; without
// it the provider ends with exactly the named classes, each with the named
// fields and Placement's defaults for the others (what osc-placement's
// `inventory set` does), so total is required for each.
func Apply(cur map[string]Inventory, edits []FieldEdit, amend bool) (map[string]Inventory, error) {
	out := map[string]Inventory{}
	if amend {
		maps.Copy(out, cur)
	}
	named := map[string]map[string]bool{}
	var order []string
	for _, e := range edits {
		v, ok := out[e.Class]
		if !ok {
			v = Defaults
		}
		e.apply(&v)
		out[e.Class] = v
		if named[e.Class] == nil {
			named[e.Class] = map[string]bool{}
			order = append(order, e.Class)
		}
		named[e.Class][e.Field] = true
	}
	for _, class := range order {
		_, existed := cur[class]
		if !named[class]["total"] && (!amend || !existed) {
			return nil, fmt.Errorf("%s: total is required for a new class (or without --amend)", class)
		}
	}
	return out, nil
}

// Check validates every record the edit writes (Validate), in class order.
// A record the edit leaves as Placement holds it is not judged again: an
// --amend of one class is not refused for another class's ratio of 0 that
// some earlier writer left.
func Check(cur, want map[string]Inventory) error {
	for _, class := range slices.Sorted(maps.Keys(want)) {
		if old, ok := cur[class]; ok && old.Equal(want[class]) {
			continue
		}
		if err := Validate(class, want[class]); err != nil {
			return err
		}
	}
	return nil
}

// Change is what an edit does to one class of one provider.
type Change struct {
	Class  string     `json:"resource_class"`
	Before *Inventory `json:"before"` // nil: added
	After  *Inventory `json:"after"`  // nil: removed
	// Used is the class's usage when the provider's usage was read (for
	// every change of that provider; see needsUsage); nil: not read.
	Used *int64 `json:"used"`
}

// needsUsage tells whether Placement's rules on usage can touch a change
// set: removing a class that has allocations is refused, and capacity
// lowered below usage is allowed with a warning. Any other change (a new
// class, capacity kept or raised) is the same whatever the usage, so
// reading it would cost Placement a request per provider for nothing.
// With lowerLater a lowered capacity is checked after the writes
// (CheckLowered), so only a removal needs the usage now.
func needsUsage(changes []Change, lowerLater bool) bool {
	return len(Removed(changes)) > 0 || (!lowerLater && slices.ContainsFunc(changes, lowered))
}

// lowered: the change keeps the class with less capacity.
func lowered(c Change) bool {
	return c.Before != nil && c.After != nil && c.After.Capacity() < c.Before.Capacity()
}

// Diff lists the classes whose records differ, sorted by class (Used is
// left for the caller, who reads usage only when needsUsage says so).
func Diff(before, after map[string]Inventory) []Change {
	var out []Change
	for _, class := range slices.Sorted(maps.Keys(union(before, after))) {
		b, hadB := before[class]
		a, hasA := after[class]
		if hadB && hasA && b.Equal(a) {
			continue
		}
		c := Change{Class: class}
		if hadB {
			c.Before = &b
		}
		if hasA {
			c.After = &a
		}
		out = append(out, c)
	}
	return out
}

func union(a, b map[string]Inventory) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// Equal compares records as stored: allocation_ratio is a single-precision
// FLOAT column.
func (i Inventory) Equal(o Inventory) bool {
	return i.Total == o.Total && i.Reserved == o.Reserved && i.MinUnit == o.MinUnit && i.MaxUnit == o.MaxUnit &&
		i.StepSize == o.StepSize && float32(i.AllocationRatio) == float32(o.AllocationRatio)
}

// Removed lists the classes a change set deletes.
func Removed(changes []Change) []string {
	var out []string
	for _, c := range changes {
		if c.After == nil {
			out = append(out, c.Class)
		}
	}
	return out
}

// DefaultAttempts bounds the read-edit-write loop: a provider still
// changing under us after this many re-reads is reported, not forced.
const DefaultAttempts = 10

// maxBackoff caps the wait before a re-read after a generation conflict.
const maxBackoff = time.Second

// backoffLimit is the longest wait after the n-th conflict in a row, whose
// attempt took last: that attempt's time, doubled per further conflict, at
// most maxBackoff. Writers that lost the same generation then come back
// one after another instead of all re-reading at once and all but one
// losing again (each lost attempt costs Placement two or three requests).
func backoffLimit(n int, last time.Duration) time.Duration {
	d := max(last, time.Millisecond)
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// backoff waits a random time up to backoffLimit(n, since start).
func backoff(ctx context.Context, n int, start time.Time) error {
	t := time.NewTimer(rand.N(backoffLimit(n, time.Since(start))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Outcome of one provider's edit.
type Outcome string

// Outcomes, as counted in summaries.
const (
	Changed   Outcome = "changed"
	Unchanged Outcome = "unchanged"
	Conflict  Outcome = "conflict"
	Failed    Outcome = "failed"
)

// Result is one provider's edit.
type Result struct {
	Provider   Provider `json:"-"`
	Outcome    Outcome  `json:"outcome"`
	Changes    []Change `json:"changes"`
	Generation int64    `json:"generation"` // after the write (or as read)
	Attempts   int      `json:"attempts"`
	Warnings   []string `json:"warnings,omitempty"`
	Err        error    `json:"-"`
	// Want is what the provider's inventories were (or, with DryRun,
	// would be) replaced with: the body of the PUT.
	Want map[string]Inventory `json:"-"`
	// Order is the classes read (the last read), in the order of
	// Placement's answer: osc-placement's inventory set --amend sends (and
	// so prints) the classes it read in that order.
	Order []string `json:"-"`
}

// InventoryEdit turns a provider's current inventories into the wanted
// ones; it is called again after every generation conflict, with what was
// re-read.
type InventoryEdit func(cur map[string]Inventory) (map[string]Inventory, error)

// Editor carries out generation-checked edits on a Store.
type Editor struct {
	Store    Store
	Attempts int  // 0: DefaultAttempts
	DryRun   bool // plan only: read, compute, write nothing
	// Confirm, when set, sees the planned changes before the first write and
	// may veto it (the replace prompt); it is not asked again on retries.
	Confirm func(p Provider, changes []Change) (bool, error)
	// LowerLater: when capacity is only lowered (no class removed), no usage
	// is read before the write; the batch calls CheckLowered after its writes.
	LowerLater bool
}

// ErrDeclined is returned when Confirm says no.
var ErrDeclined = errors.New("not confirmed")

// EditInventories reads, edits and writes p's inventories with the
// generation it read, re-reading and re-applying edit after each conflict
// (after a short random wait, see backoffLimit) up to the attempt bound.
// Removing a class with allocations is refused (ErrInUse) before any
// write; lowering capacity below usage is allowed, as in Placement, with a
// warning naming class, usage and new capacity. An edit that changes
// nothing writes nothing.
func (e *Editor) EditInventories(ctx context.Context, p Provider, edit InventoryEdit) Result {
	return e.run(ctx, Result{Provider: p}, edit, false)
}

// Plan is the first read of EditInventories, without the write: the
// result's Generation is the one read and Want the body a write would
// send. A batch plans every provider before writing any, then hands each
// plan to Write, so that the check costs no second read.
func (e *Editor) Plan(ctx context.Context, p Provider, edit InventoryEdit) Result {
	dry := *e
	dry.DryRun = true
	return dry.run(ctx, Result{Provider: p}, edit, false)
}

// Write carries out a Plan: a changed plan is written at the generation it
// read, and after a conflict the edit goes on as EditInventories does
// (re-read, re-apply), the plan's attempt counting as the first. A plan
// that failed or changes nothing is returned as it is.
func (e *Editor) Write(ctx context.Context, plan Result, edit InventoryEdit) Result {
	if plan.Err != nil || plan.Outcome != Changed || e.DryRun {
		return plan
	}
	return e.run(ctx, plan, edit, true)
}

// run is the read-edit-write loop; planned: r already holds a read and
// its changes, to be written first.
func (e *Editor) run(ctx context.Context, r Result, edit InventoryEdit, planned bool) Result {
	attempts := e.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	confirmed := e.Confirm == nil
	start := time.Now()
	for {
		if !planned {
			if r.Attempts >= attempts {
				break
			}
			if r.Attempts > 0 {
				if err := backoff(ctx, r.Attempts, start); err != nil {
					return r.fail(err)
				}
			}
			start = time.Now()
			r.Attempts++
			again := e.read(ctx, &r, edit)
			if r.Err != nil || r.Outcome == Unchanged {
				return r
			}
			if again {
				continue
			}
			if e.DryRun {
				r.Outcome = Changed
				return r
			}
		}
		planned = false
		if !confirmed {
			ok, err := e.Confirm(r.Provider, r.Changes)
			if err != nil {
				return r.fail(err)
			}
			if !ok {
				return r.fail(ErrDeclined)
			}
			confirmed = true
		}
		ngen, err := e.Store.ReplaceInventories(ctx, r.Provider.UUID, r.Generation, r.Want)
		if errors.Is(err, ErrGeneration) {
			continue
		}
		if err != nil {
			return r.fail(err)
		}
		r.Generation, r.Outcome = ngen, Changed
		return r
	}
	r.Outcome = Conflict
	r.Err = Errorf(ErrGeneration, CodeConcurrentUpdate, "%s: still changing concurrently after %d attempts; nothing written", Label(r.Provider), r.Attempts)
	return r
}

// read is one attempt's read and edit: it fills r with the generation
// read, the changes and the wanted inventories (Unchanged when there are
// none), or fails it; again: usage was read at another generation than
// the inventories (an allocation or edit landed between), so the attempt
// is void.
func (e *Editor) read(ctx context.Context, r *Result, edit InventoryEdit) (again bool) {
	gen, list, err := e.Store.ListInventories(ctx, r.Provider.UUID)
	if err != nil {
		*r = r.fail(err)
		return false
	}
	cur := make(map[string]Inventory, len(list))
	order := make([]string, len(list))
	for i, v := range list {
		cur[v.Class], order[i] = v.Inventory, v.Class
	}
	r.Order = order
	return e.decide(ctx, r, edit, gen, cur)
}

// decide is read's edit of the inventories cur read at generation gen
// (r.Order set from the same read).
func (e *Editor) decide(ctx context.Context, r *Result, edit InventoryEdit, gen int64, cur map[string]Inventory) (again bool) {
	p := r.Provider
	want, err := edit(maps.Clone(cur)) // the edit may change what it is given
	if err != nil {
		var ie *Error
		if !errors.As(err, &ie) {
			err = Errorf(ErrBadRequest, "", "%s: %v", Label(p), err)
		}
		*r = r.fail(err)
		return false
	}
	if err := Check(cur, want); err != nil {
		*r = r.fail(Errorf(ErrBadRequest, "", "%s: %v", Label(p), err))
		return false
	}
	r.Changes, r.Generation, r.Warnings, r.Want, r.Outcome = Diff(cur, want), gen, nil, want, ""
	if len(r.Changes) == 0 {
		r.Outcome = Unchanged
		return false
	}
	if !needsUsage(r.Changes, e.LowerLater) {
		return false
	}
	ugen, usage, err := e.Store.Usages(ctx, p.UUID)
	if err != nil {
		*r = r.fail(err)
		return false
	}
	if ugen != gen {
		return true
	}
	if inUse := r.useUsage(usage); len(inUse) > 0 {
		*r = r.fail(Errorf(ErrInUse, CodeInventoryInUse, "%s: cannot remove %s: inventory in use by allocations", Label(p), strings.Join(inUse, ", ")))
	}
	return false
}

// useUsage sets every change's Used from usage, warns of capacity lowered
// below it, and returns the removed classes still in use.
func (r *Result) useUsage(usage map[string]int64) (inUse []string) {
	for i := range r.Changes {
		c := &r.Changes[i]
		used := usage[c.Class]
		c.Used = &used
		switch {
		case c.After == nil && used > 0:
			inUse = append(inUse, fmt.Sprintf("%s (%d used)", c.Class, used))
		case c.After != nil && used > c.After.Capacity():
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s %s: usage %d exceeds the new capacity %d (allowed, as in Placement; no new allocations fit until usage drops)",
				Label(r.Provider), c.Class, used, c.After.Capacity()))
		}
	}
	return inUse
}

// CheckLowered is the usage check LowerLater put off, after a batch over
// aggregate agg wrote results. Per class whose capacity some write lowered,
// one listing of the aggregate's providers with room for one more unit; a
// provider with room is below its new capacity, so only those missing from
// it (full, over, or with min_unit or step_size above one) have their
// usage read: shown as used, and warned of when it exceeds the new
// capacity. Lowering capacity on an aggregate then costs one request per
// class instead of one per provider, unless most providers are full.
func (e *Editor) CheckLowered(ctx context.Context, agg string, results []Result) error {
	room := map[string]map[string]bool{}
	for i := range results {
		r := &results[i]
		if r.Outcome != Changed || r.Err != nil || slices.ContainsFunc(r.Changes, func(c Change) bool { return c.Used != nil }) {
			continue
		}
		suspect := false
		for _, c := range r.Changes {
			if !lowered(c) {
				continue
			}
			has, ok := room[c.Class]
			if !ok {
				ps, err := e.Store.ListProviders(ctx, ProviderFilter{MemberOf: []string{agg}, Resources: c.Class + ":1"})
				if err != nil {
					return err
				}
				has = map[string]bool{}
				for _, p := range ps {
					has[p.UUID] = true
				}
				room[c.Class] = has
			}
			suspect = suspect || !has[r.Provider.UUID]
		}
		if !suspect {
			continue
		}
		_, usage, err := e.Store.Usages(ctx, r.Provider.UUID)
		if err != nil {
			return err
		}
		r.useUsage(usage) // nothing is removed here: removals read usage first
	}
	return nil
}

func (r Result) fail(err error) Result {
	r.Outcome, r.Err = Failed, err
	if errors.Is(err, ErrGeneration) {
		r.Outcome = Conflict
	}
	return r
}

// Label names a provider in messages: its name and uuid.
func Label(p Provider) string {
	if p.Name == "" {
		return p.UUID
	}
	return fmt.Sprintf("%s (%s)", p.Name, p.UUID)
}

// SetEdit is the edit of `inventory set`.
func SetEdit(edits []FieldEdit, amend bool) InventoryEdit {
	return func(cur map[string]Inventory) (map[string]Inventory, error) { return Apply(cur, edits, amend) }
}

// ClassSetEdit replaces one class's record, what PUT
// /resource_providers/{uuid}/inventories/{class} does (osc-placement's
// inventory class set): the class gets the fields given and Placement's
// defaults for the others (total is required); every other class stays as
// it is. Placement updates only a class the provider has: another one is
// its 400, "No inventory record with resource class for resource provider".
func ClassSetEdit(uuid, class string, edits []FieldEdit) InventoryEdit {
	return func(cur map[string]Inventory) (map[string]Inventory, error) {
		if _, ok := cur[class]; !ok {
			return nil, Errorf(ErrBadRequest, "", "No inventory record with resource class for resource provider %s: %s", uuid, class)
		}
		v := Defaults
		total := false
		for _, e := range edits {
			if e.Class != class {
				return nil, Errorf(ErrBadRequest, "", "%s: not the class being set (%s)", e.Class, class)
			}
			e.apply(&v)
			total = total || e.Field == "total"
		}
		if !total {
			return nil, Errorf(ErrBadRequest, "", "%s: total is required", class)
		}
		out := maps.Clone(cur)
		out[class] = v
		return out, nil
	}
}

// DeleteEdit removes classes; a class the provider lacks is an error.
func DeleteEdit(classes []string) InventoryEdit {
	return func(cur map[string]Inventory) (map[string]Inventory, error) {
		out := maps.Clone(cur)
		for _, c := range classes {
			if _, ok := out[c]; !ok {
				return nil, Errorf(ErrNotFound, "", "no inventory of class %s", c)
			}
			delete(out, c)
		}
		return out, nil
	}
}

// DeleteAllEdit deletes every inventory of the provider.
func DeleteAllEdit() InventoryEdit {
	return func(map[string]Inventory) (map[string]Inventory, error) { return map[string]Inventory{}, nil }
}

// NameSetEdit turns a provider's trait or aggregate list into the wanted one.
type NameSetEdit func(cur []string) ([]string, error)

// EditTraits is the read-edit-write loop for a provider's traits.
func (e *Editor) EditTraits(ctx context.Context, p Provider, edit NameSetEdit) ([]string, error) {
	return e.editNames(ctx, p, edit, e.Store.ProviderTraits, e.Store.SetProviderTraits)
}

// EditAggregates is the read-edit-write loop for a provider's aggregates.
func (e *Editor) EditAggregates(ctx context.Context, p Provider, edit NameSetEdit) ([]string, error) {
	return e.editNames(ctx, p, edit, e.Store.ProviderAggregates, e.Store.SetProviderAggregates)
}

func (e *Editor) editNames(ctx context.Context, p Provider, edit NameSetEdit,
	get func(context.Context, string) (int64, []string, error),
	set func(context.Context, string, int64, []string) (int64, error)) ([]string, error) {
	attempts := e.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	var start time.Time
	for n := range attempts {
		if n > 0 {
			if err := backoff(ctx, n, start); err != nil {
				return nil, err
			}
		}
		start = time.Now()
		gen, cur, err := get(ctx, p.UUID)
		if err != nil {
			return nil, err
		}
		want, err := edit(slices.Clone(cur))
		if err != nil {
			return nil, err
		}
		if e.DryRun || sameSet(cur, want) {
			return want, nil
		}
		if _, err := set(ctx, p.UUID, gen, want); errors.Is(err, ErrGeneration) {
			continue
		} else if err != nil {
			return nil, err
		}
		return want, nil
	}
	return nil, Errorf(ErrGeneration, CodeConcurrentUpdate, "%s: still changing concurrently after %d attempts; nothing written", Label(p), attempts)
}

// SetAggregatesAt writes p's aggregates once, at the generation the caller
// gives (osc-placement's --generation): no read, no retry, and a write even
// when nothing changes (Placement's generation then goes up by one, as in
// the API). A provider changed since is Placement's conflict
// (ErrGeneration); duplicates are sent once.
func SetAggregatesAt(ctx context.Context, st Store, p Provider, generation int64, aggregates []string) ([]string, error) {
	want := dedupe(aggregates)
	if _, err := st.SetProviderAggregates(ctx, p.UUID, generation, want); err != nil {
		return nil, err
	}
	return want, nil
}

func sameSet(a, b []string) bool {
	x, y := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// Replace, Add and Remove are the set/add/remove edits of name lists.
func Replace(names []string) NameSetEdit {
	return func([]string) ([]string, error) { return dedupe(names), nil }
}

// Add adds names not yet present.
func Add(names []string) NameSetEdit {
	return func(cur []string) ([]string, error) { return dedupe(append(cur, names...)), nil }
}

// Remove drops names; a name not in the set is refused (ErrNotFound),
// nothing written: a typo must not pass for a removal.
func Remove(names []string) NameSetEdit {
	return func(cur []string) ([]string, error) {
		var missing []string
		for _, n := range names {
			if !slices.Contains(cur, n) && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			return nil, Errorf(ErrNotFound, "", "not set: %s (the provider has: %s); nothing removed", strings.Join(missing, ", "), orNoneList(cur))
		}
		return slices.DeleteFunc(cur, func(s string) bool { return slices.Contains(names, s) }), nil
	}
}

func orNoneList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	s := slices.Clone(names)
	slices.Sort(s)
	return strings.Join(s, ", ")
}

func dedupe(names []string) []string {
	out := []string{}
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

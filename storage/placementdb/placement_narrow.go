package placementdb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// This file narrows what `rpctl candidates` reads to the trees a request can
// use, before the model is built. It only selects rows: which trees can
// hold a candidate is decided by the conditions narrowRoots writes, each a
// necessary condition of Placement's own per-group SQL
// (research_context.get_providers_with_resource, provider_ids_matching_
// aggregates, the trait filters) lifted to whole trees, so that the model
// then answers exactly as it would over the whole database.

// providerScope limits the provider-scoped reads of readPlacementRows to
// whole trees. The roots' ids are written into the SQL as integer literals
// (they come from the database itself): one round trip each, where a bound
// argument would cost a prepare, an execute and a close.
type providerScope struct {
	roots []int64 // nil: every provider
	// providers, when narrowing read them, are every provider row, and
	// rootIDs their roots (-1 for NULL, which no tree kept has): the
	// scope's are taken from them instead of read again.
	providers []candidates.ProviderRow
	rootIDs   []int64
}

// inScope returns the rows of s.providers in the scope's trees.
func (s providerScope) inScope() []candidates.ProviderRow {
	if s.roots == nil {
		return s.providers
	}
	out := make([]candidates.ProviderRow, 0, len(s.providers))
	for i, p := range s.providers {
		if _, ok := slices.BinarySearch(s.roots, s.rootIDs[i]); ok {
			out = append(out, p)
		}
	}
	return out
}

func (s providerScope) list() string {
	if len(s.roots) == 0 {
		return "NULL" // IN (NULL) matches nothing
	}
	return sqlutil.SQLInts(s.roots)
}

// where restricts a table whose col is a provider id.
func (s providerScope) where(col string) string {
	if s.roots == nil {
		return ""
	}
	return " WHERE " + col + " IN (SELECT id FROM resource_providers WHERE root_provider_id IN (" + s.list() + "))"
}

// NarrowFrom is the provider count from which LoadPlacementFor narrows its
// read (issue 35: narrowing only where it pays). The narrowing statement
// tests every inventory of the request's classes against its usage, and
// each member_of and trait condition, and sends a row per provider that
// meets one: on placement-perfload (1,000 providers, every tree meets the
// request) it cost MariaDB 2.6 ms and left nothing out, where the whole
// read cost 6 ms. Below this count the whole read stays within tens of
// milliseconds (~7 ms at 1,000 providers, ~36 ms at nested-perfload's
// 7,000 on a quiet machine here), and that is all narrowing could win.
// Above it narrowing pays only for a request few trees meet: measured in
// process at 100,000 providers (ScaleInput, load ~5, medians of 3), a
// member_of kept 2% of the providers, 479 ms against 838 ms for the whole
// read; a trait on 40% took 1,252 ms against 869 ms, and a request every
// tree meets 2,306 ms against 697 ms (the statement's row per provider).
// The answers are the same either way (TestLoadPlacementNarrowed and the
// difftest suites compare them with narrowing forced).
const NarrowFrom = 10000

// LoadPlacementModelFor is LoadPlacementModel narrowed to the trees req can
// use, when the database holds at least narrowFrom providers (0: always;
// LoadPlacementFor passes NarrowFrom); below that it reads everything, as
// LoadPlacementModel does, in the same transaction as the count. A tree is
// read when it can satisfy, on its own providers, every
// resource class of every group that no sharing provider could supply
// instead (with room for the amount, by Placement's SQL capacity rule),
// each member_of and in_tree of such a group, and every required trait no
// sharing provider has; the trees of sharing providers and of in_tree
// targets are always read. Trees are read whole, so provider summaries,
// same_subtree and nested search see what they would over everything.
//
// It reads everything, as LoadPlacementModel does, when narrowing could
// change the answer or its errors: a class or trait the database does not
// know (Placement's 400 depends on the groups searched before it). Callers
// that must see the hosts left out (--explain) or shuffle over all of them
// (randomize) use LoadPlacementModel.
func LoadPlacementModelFor(ctx context.Context, db *storage.DB, req *candidates.Request, narrowFrom int) (*candidates.ModelInput, error) {
	return loadModelFor(ctx, db, req, narrowFrom, nil)
}

// loadModelFor is LoadPlacementModelFor, calling start (when not nil) with
// the providers as soon as they are known (see candidates.StartModel).
func loadModelFor(ctx context.Context, db *storage.DB, req *candidates.Request, narrowFrom int, start func([]candidates.ProviderRow)) (*candidates.ModelInput, error) {
	return readModelTx(ctx, db, func(query storage.RawQuery) (*candidates.ModelInput, error) {
		scope, hasTrees, err := narrowRoots(db, query, req, narrowFrom)
		if err != nil {
			return nil, err
		}
		in, err := readPlacementRows(db, query, scope, start)
		if err != nil {
			return nil, err
		}
		in.HasTrees = hasTrees
		return in, nil
	})
}

// readTree reads every provider with its root: the scope of every tree,
// and whether any provider has a parent. Its statement carries the extra
// branches too, each a query of up to six columns after its tag (the tag
// is written here: 1 for the first extra), padded with NULLs, and what to
// do with each of its rows: one round trip for what narrowing needs to
// know before its conditions (issue 35).
func readTree(db *storage.DB, query storage.RawQuery, extra ...treeBranch) (providerScope, bool, error) {
	hasTrees := false
	raw := newRawRow(7)
	var s providerScope
	var extras []string
	var args []any
	for i, b := range extra {
		extras = append(extras, "SELECT "+strconv.Itoa(i+1)+", "+b.cols+strings.Repeat(", NULL", 6-strings.Count(b.cols, ",")-1)+" FROM "+b.from)
		args = append(args, b.args...)
	}
	// The extra branches are one statement: they send a few rows each
	// (none, mostly), and each statement of a script costs the server
	// more than a branch of a UNION ALL does (the four of
	// placement-perfload: 0.50 ms against 0.31 alone, the whole script
	// 1.05 against 0.94 ms; medians of 201 through the driver; issue 35).
	selects := []string{`SELECT 0, id, uuid, name, generation, parent_provider_id, root_provider_id FROM resource_providers`}
	if len(extras) > 0 {
		selects = append(selects, strings.Join(extras, " UNION ALL "))
	}
	q, args := branches(db, selects, args)
	err := scanRaw(db, query, "resource_providers", raw, q, args, func() error {
		t := raw.int(0)
		if t > 0 && t <= int64(len(extra)) {
			extra[t-1].row(raw)
			return raw.err
		}
		if t != 0 {
			raw.fail(fmt.Errorf("branch %d of %d", t, len(extra)+1))
			return raw.err
		}
		p := candidates.ProviderRow{ID: raw.int(1), UUID: raw.str(2), Name: raw.str(3)}
		p.Generation, _ = raw.nullInt(4)
		var parent bool
		p.ParentID, parent = raw.nullInt(5)
		root, ok := raw.nullInt(6)
		hasTrees = hasTrees || parent
		if !ok {
			root = -1
		}
		s.providers = push(s.providers, p)
		s.rootIDs = push(s.rootIDs, root)
		return raw.err
	})
	return s, hasTrees, err
}

// treeBranch is one extra branch of readTree's statement.
type treeBranch struct {
	cols string // the columns after the tag, up to six, separated by ", "
	from string // what follows FROM
	args []any
	row  func(raw *rawRow) // the tag is column 0, cols from 1
}

// narrowRoots returns the trees to read (nil roots: all of them) and
// whether the database has nested providers at all (the search treats a
// flat cloud differently, and the rows read may not show the trees).
// Below narrowFrom providers it keeps every tree without asking more.
func narrowRoots(db *storage.DB, query storage.RawQuery, req *candidates.Request, narrowFrom int) (providerScope, bool, error) {
	// Every class and trait the request names must exist, or the full read
	// is what reproduces Placement's error (or its empty answer).
	var classNames, traitNames, inTrees []string
	for _, g := range req.Groups {
		for c := range g.Resources {
			if !standards.IsResourceClass(c) {
				classNames = append(classNames, c)
			}
		}
		for _, set := range g.RequiredTraits {
			traitNames = append(traitNames, set...)
		}
		traitNames = append(traitNames, g.ForbiddenTraits...)
		if g.InTree != "" {
			inTrees = append(inTrees, g.InTree)
		}
	}
	traitNames = append(append(traitNames, req.RootRequired...), req.RootForbidden...)

	// Every provider with its root first — the map from the conditions'
	// providers to their trees, whether there are trees and how many; the
	// rows are the model's own unless some tree is left out (then they are
	// filtered here rather than read again) — and in the same statement
	// what the conditions are written from: the ids of those classes and
	// traits, the sharing providers with the classes and traits they hold
	// (what they could supply instead of a tree's own), and the in_tree
	// targets, by uuid or name (the command resolves an in_tree value that
	// is no provider's uuid as a name, on the model this read builds).
	// The sharing providers are found through the trait's name, so that
	// the traits' primary key leads each join (a self-join of
	// resource_provider_traits by a trait id scanned the whole table).
	customIDs, traitIDs := map[string]int64{}, map[string]int64{}
	var sharingProviders, targets []int64
	sharingClasses, sharingTraits := map[int64]bool{}, map[int64]bool{}
	const sharing = `resource_provider_traits rpt JOIN traits t ON t.id = rpt.trait_id AND t.name = 'MISC_SHARES_VIA_AGGREGATE'`
	extra := []treeBranch{
		{cols: `rpt.resource_provider_id`, from: sharing, row: func(r *rawRow) { sharingProviders = push(sharingProviders, r.int(1)) }},
		{cols: `i.resource_class_id`, from: sharing + ` JOIN inventories i ON i.resource_provider_id = rpt.resource_provider_id`,
			row: func(r *rawRow) { sharingClasses[r.int(1)] = true }},
		{cols: `o.trait_id`, from: sharing + ` JOIN resource_provider_traits o ON o.resource_provider_id = rpt.resource_provider_id`,
			row: func(r *rawRow) { sharingTraits[r.int(1)] = true }},
	}
	if len(traitNames) > 0 {
		extra = append(extra, treeBranch{cols: `id, name`, from: `traits WHERE name IN (` + sqlutil.InList(len(traitNames)) + `)`, args: anys(traitNames),
			row: func(r *rawRow) { traitIDs[r.str(2)] = r.int(1) }})
	}
	if len(classNames) > 0 {
		extra = append(extra, treeBranch{cols: `id, name`, from: `resource_classes WHERE name IN (` + sqlutil.InList(len(classNames)) + `)`, args: anys(classNames),
			row: func(r *rawRow) { customIDs[r.str(2)] = r.int(1) }})
	}
	if len(inTrees) > 0 {
		extra = append(extra, treeBranch{cols: `id`, from: `resource_providers WHERE uuid IN (` + sqlutil.InList(len(inTrees)) + `) OR name IN (` + sqlutil.InList(len(inTrees)) + `)`,
			args: append(anys(inTrees), anys(inTrees)...), row: func(r *rawRow) { targets = push(targets, r.int(1)) }})
	}
	whole, hasTrees, err := readTree(db, query, extra...)
	if err != nil {
		return providerScope{}, false, err
	}
	if len(whole.providers) < narrowFrom {
		return whole, hasTrees, nil
	}
	tree, treeRoots := whole.providers, whole.rootIDs
	rootOf := make(map[int64]int64, len(tree))
	allRoots := map[int64]bool{}
	for i, p := range tree {
		if r := treeRoots[i]; r != -1 {
			rootOf[p.ID] = r
			allRoots[r] = true
		}
	}
	for _, c := range classNames {
		if _, ok := customIDs[c]; !ok {
			return whole, hasTrees, nil
		}
	}
	for _, t := range traitNames {
		if _, ok := traitIDs[t]; !ok {
			return whole, hasTrees, nil
		}
	}
	classID := func(name string) int64 {
		if i := slices.Index(standards.ResourceClasses(), name); i >= 0 {
			return int64(i)
		}
		return customIDs[name]
	}
	raw2 := newRawRow(2)

	// The conditions are the branches of one statement, each row a
	// condition's number and a provider meeting it; the providers are
	// mapped to their roots here and the sets intersected, as Placement
	// intersects its per-class provider lists in Python: one statement of
	// many EXISTS made MariaDB's optimizer search join orders for minutes,
	// and a join to resource_providers for the root in each condition cost
	// more than the tree map read once. Every class is tested in one pass
	// over inventories, with the largest amount any group asks of it (a
	// tree with a provider that holds that much meets every group's own
	// condition on the class).
	var conds []string
	var args []any
	amounts := map[int64]int64{}
	var classes []int64
	nconds := 0 // the conditions other than the classes' come first
	for _, g := range req.Groups {
		// A group's own-tree conditions hold only when some class of it
		// must come from the tree: one no sharing provider has.
		own := false
		for _, c := range slices.Sorted(maps.Keys(g.Resources)) {
			id := classID(c)
			if sharingClasses[id] {
				continue
			}
			own = true
			if a, seen := amounts[id]; !seen || g.Resources[c] > a {
				if !seen {
					classes = append(classes, id)
				}
				amounts[id] = g.Resources[c]
			}
		}
		if own {
			for _, set := range g.MemberOf {
				conds = append(conds, `SELECT ?, pa.resource_provider_id FROM resource_provider_aggregates pa
				JOIN placement_aggregates ag ON ag.id = pa.aggregate_id WHERE ag.uuid IN (`+sqlutil.InList(len(set))+`)`)
				args = append(append(args, nconds), anys(set)...)
				nconds++
			}
			if g.InTree != "" {
				conds = append(conds, `SELECT ?, id FROM resource_providers WHERE uuid = ?`)
				args = append(args, nconds, g.InTree)
				nconds++
			}
		}
		for _, set := range g.RequiredTraits {
			var tids []any
			shared := false
			for _, t := range set {
				shared = shared || sharingTraits[traitIDs[t]]
				tids = append(tids, traitIDs[t])
			}
			if shared {
				continue
			}
			conds = append(conds, `SELECT ?, resource_provider_id FROM resource_provider_traits WHERE trait_id IN (`+sqlutil.InList(len(tids))+`)`)
			args = append(append(args, nconds), tids...)
			nconds++
		}
	}
	if len(classes) > 0 {
		// Placement's capacity clause, on one provider of the tree (each
		// class of a group comes from one provider); the condition's
		// number follows the others, in the order classes were found.
		number, amount := "CASE i.resource_class_id", "CASE i.resource_class_id"
		var numArgs, classArgs, amountArgs []any
		for n, id := range classes {
			number += " WHEN ? THEN ?"
			amount += " WHEN ? THEN ?"
			numArgs = append(numArgs, id, nconds+n)
			classArgs = append(classArgs, id)
			amountArgs = append(amountArgs, id, amounts[id])
		}
		number += " END"
		amount += " END"
		in := sqlutil.InList(len(classes))
		conds = append(conds, `SELECT `+number+`, i.resource_provider_id FROM inventories i
			LEFT JOIN (SELECT resource_provider_id, resource_class_id, SUM(used) AS used FROM allocations WHERE resource_class_id IN (`+in+`)
				GROUP BY resource_provider_id, resource_class_id) u
			ON u.resource_provider_id = i.resource_provider_id AND u.resource_class_id = i.resource_class_id
			WHERE i.resource_class_id IN (`+in+`) AND COALESCE(u.used, 0) + `+amount+` <= (i.total - i.reserved) * i.allocation_ratio`)
		args = append(append(append(append(args, numArgs...), classArgs...), classArgs...), amountArgs...)
		nconds += len(classes)
	}
	if nconds == 0 {
		return whole, hasTrees, nil
	}
	rootsOf := func(providers []int64) []int64 {
		out := make([]int64, 0, len(providers))
		for _, p := range providers {
			if r, ok := rootOf[p]; ok {
				out = append(out, r)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	// Each condition's providers, then their trees, intersected.
	met := make([][]int64, nconds)
	dsts := make([]*[]int64, nconds)
	for i := range met {
		dsts[i] = &met[i]
	}
	// Literals (one round trip on MySQL instead of a prepare, an execute
	// and a close).
	cq, cargs := branches(db, conds, args)
	err = scanRaw(db, query, "narrowing conditions", raw2, cq, cargs, tagged(raw2, dsts, func() int64 { return raw2.int(1) }))
	if err != nil {
		return providerScope{}, false, err
	}
	var keep []int64
	for i := range met {
		roots := rootsOf(met[i])
		if i == 0 {
			keep = roots
		} else {
			keep = slices.DeleteFunc(keep, func(r int64) bool { _, ok := slices.BinarySearch(roots, r); return !ok })
		}
		if len(keep) == 0 {
			break
		}
	}
	if len(keep) == len(allRoots) {
		return whole, hasTrees, nil // nothing to leave out
	}
	keep = append(keep, rootsOf(targets)...)
	keep = append(keep, rootsOf(sharingProviders)...)
	slices.Sort(keep)
	return providerScope{roots: slices.Compact(keep), providers: tree, rootIDs: treeRoots}, hasTrees, nil
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// LoadPlacementFor is LoadPlacement over LoadPlacementModelFor's read,
// narrowed from NarrowFrom providers.
func LoadPlacementFor(ctx context.Context, db *storage.DB, req *candidates.Request) (*candidates.Model, error) {
	var started *candidates.ModelStart
	in, err := loadModelFor(ctx, db, req, NarrowFrom, func(p []candidates.ProviderRow) { started = candidates.StartModel(p) })
	return buildModel(db, started, in, err)
}

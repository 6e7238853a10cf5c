package placementdb

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// updateScript is node k's transaction and marker as SQL for a node that
// nodeScript leaves out: one that updates providers Placement holds
// already (a re-run that changes a node, a layout switch with its
// allocation moves, pools left, stale device providers deleted). It is
// writeGroup's transaction statement for statement, in writeGroup's order,
// with the conditions writeGroup checks on the client (a provider's
// generation, an allocation still as planned, the room left on a move's
// target, no allocation on an inventory deleted, none and no child on a
// provider deleted) checked by the server instead: a failed check raises
// error 1242 (aggregateCASFailed's scalar subquery of two rows), the
// script stops there and the node's transaction is rolled back. The node
// is then written again through writeGroup (errScriptCheck), which finds
// the same condition and answers it with writeGroup's own error
// (migrate.ErrGenerationConflict, migrate.ErrInventoryInUse, ...), or
// writes the node if the condition went away meanwhile: so the error a
// caller sees is writeGroup's, whatever the path. (Issue 35: a layout
// switch sent statement by statement cost 32 round trips per node.)
//
// It returns false when the node cannot go in a script: a class, trait or
// aggregate without an id, or a value with no literal that reads the same
// in every sql_mode.
func updateScript(w *migrate.NodeWrite, ids *migrate.PlacementIDs, now any, k int, g scriptGuard) ([]byte, bool) {
	if len(w.Providers) == 0 {
		return nil, false
	}
	ok := true
	lit := func(b []byte, v any) []byte {
		b, good := sqlutil.AppendLiteral(b, v)
		ok = ok && good
		return b
	}
	// uuids is the IN list that finds a provider as uuidMatch does.
	uuids := func(b []byte, u string) []byte {
		_, spellings := uuidMatch("uuid", u)
		b = append(b, "uuid IN ("...)
		for i, s := range spellings {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = lit(b, s)
		}
		return append(b, ')')
	}
	check := func(b []byte, cond string) []byte {
		return append(append(append(b, "SET @rpctl_check = (SELECT 1 FROM (SELECT 1 UNION ALL SELECT 2) two WHERE "...), cond...), ");\n"...)
	}
	// Provider i of the node has its id in @rpI and its root's in @rtI;
	// a provider outside the node (a parent, a move's other end) in
	// @rpxN and @rtxN.
	v := func(b []byte, name string, n int) []byte { return strconv.AppendInt(append(b, name...), int64(n), 10) }
	index := make(map[string]int, len(w.Providers))
	for i := range w.Providers {
		index[w.Providers[i].UUID] = i
	}
	outside := map[string]int{}
	ts := lit(nil, now)
	b := g.begin(make([]byte, 0, 2048))
	// ref is the session variable holding the provider's id, read from
	// its row the first time an outside provider is named; missing says
	// a provider outside the node is not there (writeGroup: a conflict or
	// a failed read).
	ref := func(b []byte, u string) ([]byte, string) {
		if i, in := index[u]; in {
			return b, string(v(nil, "@rp", i))
		}
		n, seen := outside[u]
		if !seen {
			n = len(outside)
			outside[u] = n
			b = v(append(b, "SET "...), "@rpx", n)
			b = uuids(append(b, " = (SELECT id FROM resource_providers WHERE "...), u)
			b = v(append(b, "), "...), "@rtx", n)
			b = uuids(append(b, " = (SELECT root_provider_id FROM resource_providers WHERE "...), u)
			b = append(b, ");\n"...)
			b = check(b, string(v(nil, "@rpx", n))+" IS NULL")
		}
		return b, string(v(nil, "@rpx", n))
	}
	// Existing providers first, each from the generation it was planned
	// at (bumpGeneration).
	for i := range w.Providers {
		p := &w.Providers[i]
		if p.Create {
			continue
		}
		b = lit(append(b, "UPDATE resource_providers SET generation = "...), p.Generation)
		b = append(append(b, ", updated_at = "...), ts...)
		b = uuids(append(b, " WHERE "...), p.UUID)
		b = g.and(lit(append(b, " AND generation = "...), p.ExpectGeneration))
		b = check(append(b, ";\n"...), "ROW_COUNT() <> 1")
		b = v(append(b, "SET "...), "@rp", i)
		b = uuids(append(b, " = (SELECT id FROM resource_providers WHERE "...), p.UUID)
		b = v(append(b, "), "...), "@rt", i)
		b = uuids(append(b, " = (SELECT root_provider_id FROM resource_providers WHERE "...), p.UUID)
		b = append(b, ");\n"...)
	}
	// New providers, parents before children (the node's order).
	for i := range w.Providers {
		p := &w.Providers[i]
		if !p.Create {
			continue
		}
		var parent, root string
		if p.ParentUUID != "" {
			if j, in := index[p.ParentUUID]; in {
				if j >= i && w.Providers[j].Create {
					return nil, false // a child before its parent: writeGroup's levels sort it
				}
				parent, root = string(v(nil, "@rp", j)), string(v(nil, "@rt", j))
			} else {
				b, parent = ref(b, p.ParentUUID)
				root = "@rtx" + strings.TrimPrefix(parent, "@rpx")
			}
		}
		if p.ParentUUID == "" {
			b = g.open(g.values(append(b, "INSERT INTO resource_providers (created_at, uuid, name, generation) "...)))
		} else {
			b = g.open(g.values(append(b, "INSERT INTO resource_providers (created_at, uuid, name, generation, parent_provider_id, root_provider_id) "...)))
		}
		b = append(b, ts...)
		b = lit(append(b, ", "...), p.UUID)
		b = lit(append(b, ", "...), p.Name)
		b = lit(append(b, ", "...), p.Generation)
		if p.ParentUUID != "" {
			b = append(append(append(append(b, ", "...), parent...), ", "...), root...)
		}
		b = append(v(append(g.close(b), ";\nSET "...), "@rp", i), " = LAST_INSERT_ID();\n"...)
		if p.ParentUUID == "" {
			// Placement's _create_in_db: a root is its own root.
			b = v(append(b, "UPDATE resource_providers SET root_provider_id = "...), "@rp", i)
			b = append(g.and(v(append(b, " WHERE id = "...), "@rp", i)), ";\n"...)
			b = append(v(append(v(append(b, "SET "...), "@rt", i), " = "...), "@rp", i), ";\n"...)
		} else {
			b = append(append(v(append(b, "SET "...), "@rt", i), " = "...), root...)
			b = append(b, ";\n"...)
		}
	}
	b = appendMoves(b, w, ids, ts, lit, check, ref, &ok, g)
	for i := range w.Providers {
		p := &w.Providers[i]
		if len(p.RemoveAggregates) == 0 {
			continue
		}
		b = v(append(b, "DELETE FROM resource_provider_aggregates WHERE resource_provider_id = "...), "@rp", i)
		b = append(b, " AND aggregate_id IN (SELECT id FROM placement_aggregates WHERE uuid IN ("...)
		for j, a := range p.RemoveAggregates {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = lit(b, a)
		}
		b = append(g.and(append(b, "))"...)), ";\n"...)
	}
	class := func(rc string) int64 {
		id, known := ids.Classes[rc]
		ok = ok && known
		return id
	}
	for i := range w.Providers {
		p := &w.Providers[i]
		for _, rc := range slices.Sorted(maps.Keys(p.UpdateInventories)) {
			inv := p.UpdateInventories[rc]
			b = append(append(b, "UPDATE inventories SET updated_at = "...), ts...)
			for _, f := range []struct {
				col string
				val any
			}{{"total", inv.Total}, {"reserved", inv.Reserved}, {"min_unit", inv.MinUnit}, {"max_unit", inv.MaxUnit}, {"step_size", inv.StepSize}, {"allocation_ratio", inv.AllocationRatio}} {
				b = lit(append(append(append(b, ", "...), f.col...), " = "...), f.val)
			}
			b = v(append(b, " WHERE resource_provider_id = "...), "@rp", i)
			b = append(g.and(lit(append(b, " AND resource_class_id = "...), class(rc))), ";\n"...)
		}
		for _, rc := range p.DeleteInventories {
			where := string(lit(append(v([]byte("resource_provider_id = "), "@rp", i), " AND resource_class_id = "...), class(rc)))
			b = check(b, "EXISTS (SELECT 1 FROM allocations WHERE "+where+")")
			b = append(g.and(append(append(b, "DELETE FROM inventories WHERE "...), where...)), ";\n"...)
		}
		if len(p.RemoveTraits) > 0 {
			b = v(append(b, "DELETE FROM resource_provider_traits WHERE resource_provider_id = "...), "@rp", i)
			b = append(b, " AND trait_id IN (SELECT id FROM traits WHERE name IN ("...)
			for j, t := range p.RemoveTraits {
				if j > 0 {
					b = append(b, ", "...)
				}
				b = lit(b, t)
			}
			b = append(g.and(append(b, "))"...)), ";\n"...)
		}
	}
	// What the providers add, one multi-row INSERT per table, after the
	// updates and deletes as in writeGroup.
	rows := func(head string, each func(b []byte, i int, p *migrate.ProviderWrite) []byte) {
		start := len(b)
		b = g.values(append(b, head...))
		body := len(b)
		for i := range w.Providers {
			b = each(b, i, &w.Providers[i])
		}
		if len(b) == body {
			b = b[:start]
			return
		}
		b = append(b[:len(b)-len(g.sep())], ";\n"...) // the last row's separator
	}
	rows("INSERT INTO inventories (created_at, resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio) ", func(b []byte, i int, p *migrate.ProviderWrite) []byte {
		for _, rc := range slices.Sorted(maps.Keys(p.AddInventories)) {
			inv := p.AddInventories[rc]
			b = v(append(append(g.open(b), ts...), ", "...), "@rp", i)
			for _, x := range []any{class(rc), inv.Total, inv.Reserved, inv.MinUnit, inv.MaxUnit, inv.StepSize, inv.AllocationRatio} {
				b = lit(append(b, ", "...), x)
			}
			b = append(g.close(b), g.sep()...)
		}
		return b
	})
	rows("INSERT INTO resource_provider_traits (created_at, trait_id, resource_provider_id) ", func(b []byte, i int, p *migrate.ProviderWrite) []byte {
		for _, t := range p.AddTraits {
			tid, known := ids.Traits[t]
			ok = ok && known
			b = lit(append(append(g.open(b), ts...), ", "...), tid)
			b = append(g.close(v(append(b, ", "...), "@rp", i)), g.sep()...)
		}
		return b
	})
	rows("INSERT INTO resource_provider_aggregates (created_at, resource_provider_id, aggregate_id) ", func(b []byte, i int, p *migrate.ProviderWrite) []byte {
		for _, a := range p.AddAggregates {
			aid, known := ids.Aggregates[a]
			ok = ok && known
			b = v(append(append(g.open(b), ts...), ", "...), "@rp", i)
			b = append(g.close(lit(append(b, ", "...), aid)), g.sep()...)
		}
		return b
	})
	// Providers deleted last, as deleteProvider does: refused while they
	// have allocations or children.
	for i := range w.Providers {
		if !w.Providers[i].Delete {
			continue
		}
		id := string(v(nil, "@rp", i))
		b = check(b, "EXISTS (SELECT 1 FROM allocations WHERE resource_provider_id = "+id+") OR EXISTS (SELECT 1 FROM resource_providers WHERE parent_provider_id = "+id+")")
		for _, q := range []string{
			"DELETE FROM inventories WHERE resource_provider_id = ",
			"DELETE FROM resource_provider_traits WHERE resource_provider_id = ",
			"DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ",
			"DELETE FROM resource_providers WHERE id = ",
		} {
			b = append(g.and(append(append(b, q...), id...)), ";\n"...)
		}
	}
	return g.commit(b, k), ok
}

// appendMoves is applyMoves as script statements: the providers' generations
// up first, in id order (the row locks make writers aiming at one pool wait
// for each other), each allocation moved only if it is still exactly as
// planned, the room left on each target checked with a locking read (on
// MySQL it sees what other transactions committed after this one's
// snapshot), and the consumers' generations up.
func appendMoves(b []byte, w *migrate.NodeWrite, ids *migrate.PlacementIDs, ts []byte,
	lit func([]byte, any) []byte, check func([]byte, string) []byte, ref func([]byte, string) ([]byte, string), ok *bool, g scriptGuard) []byte {
	if len(w.Moves) == 0 {
		return b
	}
	type bound struct{ to, class string }
	from := make([]string, len(w.Moves))
	to := make([]string, len(w.Moves))
	var touched []string
	for i, mv := range w.Moves {
		b, from[i] = ref(b, mv.From)
		b, to[i] = ref(b, mv.To)
		for _, r := range []string{from[i], to[i]} {
			if !slices.Contains(touched, r) {
				touched = append(touched, r)
			}
		}
	}
	b = append(b, "UPDATE resource_providers SET generation = generation + 1 WHERE id IN ("...)
	b = append(g.and(append(append(b, strings.Join(touched, ", ")...), ')')), " ORDER BY id;\n"...)
	var bounds []bound
	limits := map[bound]int64{}
	var consumers []string
	for i, mv := range w.Moves {
		cid, known := ids.Classes[mv.Class]
		b = append(b, "UPDATE allocations SET resource_provider_id = "...)
		b = append(append(append(append(b, to[i]...), ", updated_at = "...), ts...), " WHERE consumer_id = "...)
		b = lit(b, mv.Consumer)
		b = append(append(append(b, " AND resource_provider_id = "...), from[i]...), " AND resource_class_id = "...)
		b = lit(b, cid)
		*ok = *ok && known
		b = g.and(lit(append(b, " AND used = "...), mv.Used))
		b = check(append(b, ";\n"...), "ROW_COUNT() <> 1")
		k := bound{to[i], strconv.FormatInt(cid, 10)}
		if _, seen := limits[k]; !seen {
			bounds = append(bounds, k)
		}
		limits[k] = mv.Limit
		if !slices.Contains(consumers, mv.Consumer) {
			consumers = append(consumers, mv.Consumer)
		}
	}
	for _, k := range bounds {
		b = append(append(b, "SELECT COALESCE(SUM(used), 0) INTO @rpctl_used FROM allocations WHERE resource_provider_id = "...), k.to...)
		b = append(append(append(b, " AND resource_class_id = "...), k.class...), " LOCK IN SHARE MODE;\n"...)
		b = check(b, "@rpctl_used > "+strconv.FormatInt(limits[k], 10))
	}
	b = append(append(b, "UPDATE consumers SET generation = generation + 1, updated_at = "...), ts...)
	b = append(b, " WHERE uuid IN ("...)
	for i, c := range consumers {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = lit(b, c)
	}
	return append(g.and(append(b, ')')), ";\n"...)
}

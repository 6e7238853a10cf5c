package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// ClaimsPlacement reads and writes consumers' allocations in the Placement
// database the way placement-api's GET and PUT /allocations/{consumer}
// (microversion 1.28) do. It implements claims.Placement.
type ClaimsPlacement struct {
	DB *storage.DB
	// GroupSize is how many consumers one transaction writes when none of
	// them is refused (default DefaultClaimGroup); a refused write is redone
	// so that exactly the consumers before it are written (writePrefix).
	GroupSize int

	rcID   map[string]int64
	rcName map[int64]string
}

func (p *ClaimsPlacement) loadClasses(ctx context.Context) error {
	if p.rcID != nil {
		return nil
	}
	ids, err := sqlutil.NameIDs(ctx, p.DB, "resource_classes", "name")
	if err != nil {
		return err
	}
	p.rcID, p.rcName = ids, map[int64]string{}
	for n, id := range ids {
		p.rcName[id] = n
	}
	return nil
}

// ConsumerAllocations is GET /allocations/{consumer} for each consumer:
// allocations joined to their consumer, project and user records, so that an
// allocation whose consumer record is missing is not shown (as Placement
// does not show it).
//
// A consumer is looked up by its canonical uuid (lower case, as
// PutAllocations writes it) and answered under the spelling asked for.
func (p *ClaimsPlacement) ConsumerAllocations(ctx context.Context, consumers []string) (map[string]*claims.Allocations, error) {
	db := p.DB
	if err := p.loadClasses(ctx); err != nil {
		return nil, err
	}
	asked := map[string][]string{}
	canon := make([]string, 0, len(consumers))
	for _, c := range consumers {
		k := canonicalUUID(c)
		if asked[k] == nil {
			canon = append(canon, k)
		}
		asked[k] = append(asked[k], c)
	}
	consumers = canon
	out := map[string]*claims.Allocations{}
	for start := 0; start < len(consumers); start += sqlutil.MaxInList {
		chunk := consumers[start:min(start+sqlutil.MaxInList, len(consumers))]
		args := make([]any, len(chunk))
		for i, c := range chunk {
			args[i] = c
		}
		rows, err := db.QueryContext(ctx, db.Rebind(`SELECT a.consumer_id, rp.uuid, rp.generation, a.resource_class_id, a.used, c.generation, pr.external_id, us.external_id, ct.name
FROM allocations a
JOIN resource_providers rp ON a.resource_provider_id = rp.id
JOIN consumers c ON a.consumer_id = c.uuid
JOIN projects pr ON c.project_id = pr.id
JOIN users us ON c.user_id = us.id
LEFT JOIN consumer_types ct ON c.consumer_type_id = ct.id
WHERE a.consumer_id IN (`+sqlutil.InList(len(chunk))+`)
ORDER BY a.id`), args...)
		if err != nil {
			return nil, db.Errorf("read allocations: %w", storage.CleanError(err))
		}
		for rows.Next() {
			var consumer, rp, project, user string
			var rpGen, rcID, used, cGen int64
			var ctype sql.NullString
			if err := rows.Scan(&consumer, &rp, &rpGen, &rcID, &used, &cGen, &project, &user, &ctype); err != nil {
				rows.Close()
				return nil, db.Errorf("read allocations: %w", storage.CleanError(err))
			}
			a := out[consumer]
			if a == nil {
				g := cGen
				a = &claims.Allocations{Allocations: map[string]claims.ProviderAllocation{}, ProjectID: project, UserID: user, ConsumerGeneration: &g,
					ConsumerType: claims.UnknownConsumerType}
				if ctype.Valid {
					a.ConsumerType = ctype.String
				}
				out[consumer] = a
			}
			pa, ok := a.Allocations[rp]
			if !ok {
				pa = claims.ProviderAllocation{Generation: rpGen, Resources: map[string]int64{}}
				a.Providers = append(a.Providers, rp)
			}
			// Placement reads a consumer's allocations by its consumer_id
			// index, so in the order they were written (their ids).
			pa.Resources[p.rcName[rcID]] = used
			pa.Classes = append(pa.Classes, p.rcName[rcID])
			a.Allocations[rp] = pa
		}
		if err := rows.Close(); err != nil {
			return nil, db.Errorf("read allocations: %w", storage.CleanError(err))
		}
	}
	answer := make(map[string]*claims.Allocations, len(out))
	for k, a := range out {
		for _, c := range asked[k] {
			answer[c] = a
		}
	}
	return answer, nil
}

// PutAllocations writes each consumer's allocation as PUT
// /allocations/{consumer} at 1.28 does: the project and user records
// created when missing, the consumer record created (generation 0) when the
// request's consumer_generation is null and checked against it otherwise,
// its project and user updated, its old allocations replaced, capacity and
// min_unit/max_unit/step_size checked, and each provider's and the
// consumer's generation incremented once per consumer. Consumers are
// written in groups, each group in one transaction.
//
// Consumer and provider uuids are written in their canonical form (lower
// case), whatever the caller's spelling: Placement's tables compare them
// case-insensitively on MySQL and exactly on SQLite, so an upper-case
// spelling of a consumer once made a second consumer on SQLite and a
// duplicate-key error on MariaDB.
func (p *ClaimsPlacement) PutAllocations(ctx context.Context, ws []claims.Write) (int, error) {
	if err := p.loadClasses(ctx); err != nil {
		return 0, err
	}
	ws = canonicalWrites(ws)
	size := p.GroupSize
	if size <= 0 {
		size = DefaultClaimGroup
	}
	done := 0
	for done < len(ws) {
		n, err := p.writePrefix(ctx, ws[done:min(done+size, len(ws))])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// DefaultClaimGroup is how many consumers one transaction writes when
// GroupSize is 0: a group costs about twenty round trips however many
// consumers it holds, so groups of 100 made heal cost 0.2 round trips per
// instance on their own across the network (issue 35). A variable only so
// that the tests that SIGKILL heal between its commits get many commits
// out of a small cloud.
var DefaultClaimGroup = 1000

// writePrefix writes the consumers of group in one transaction or, when
// one is refused, exactly those that writing them one at a time would
// write before the first refusal, and that refusal: the consumers before
// the one named refused (themselves split the same way), then that one
// alone (a refusal that came from consumers after it passes alone), then
// the rest. A group that passes as a whole passes one at a time: its
// checks count the consumers before each one, and more.
func (p *ClaimsPlacement) writePrefix(ctx context.Context, group []claims.Write) (int, error) {
	if len(group) == 0 {
		return 0, nil
	}
	err := p.writeRetrying(ctx, group)
	if err == nil {
		return len(group), nil
	}
	var we *claims.WriteError
	if !errors.As(err, &we) || len(group) == 1 {
		return 0, err
	}
	k := slices.IndexFunc(group, func(w claims.Write) bool { return w.Consumer == we.Consumer })
	if k < 0 {
		// A refusal naming no consumer of the group: one at a time.
		for i, w := range group {
			if err := p.writeRetrying(ctx, []claims.Write{w}); err != nil {
				return i, err
			}
		}
		return len(group), nil
	}
	n, err := p.writePrefix(ctx, group[:k])
	if err != nil {
		return n, err
	}
	if err := p.writeRetrying(ctx, group[k:k+1]); err != nil {
		return k, err
	}
	m, err := p.writePrefix(ctx, group[k+1:])
	return k + 1 + m, err
}

// writeRetrying writes a group in one transaction, run again as a whole
// when it loses a deadlock, a lock wait, a Galera certification conflict or
// a generation compare-and-swap (storage.DB.Tx), as placement retries
// _set_allocations, and when another writer created a consumer, project or
// user since this transaction read them (storage.DB.EnsureTx): a fresh try
// reads them (and reports the generation conflict Placement would).
func (p *ClaimsPlacement) writeRetrying(ctx context.Context, ws []claims.Write) error {
	return p.DB.EnsureTx(ctx, func(tx *sqlx.Tx) error { return p.writeGroup(ctx, tx, ws) })
}

// errGenerationRace is a generation compare-and-swap that matched no row:
// another writer (on Galera possibly through another node, where no row
// lock of ours reaches) changed the provider or consumer since this
// transaction read it.
var errGenerationRace = fmt.Errorf("resource provider or consumer generation changed concurrently: %w", storage.ErrRetry)

type groupProvider struct {
	id, generation int64
	bumps          int64
}

func (p *ClaimsPlacement) writeGroup(ctx context.Context, tx *sqlx.Tx, ws []claims.Write) error {
	db := p.DB
	fail := func(w claims.Write, detail string) error {
		// Nova reports a refused PUT other than a consumer generation
		// conflict with an empty error; Detail keeps Placement's reason.
		return &claims.WriteError{Consumer: w.Consumer, Detail: detail}
	}
	// Providers, locked for the generation increments and capacity check.
	provUUIDs := map[string]bool{}
	for _, w := range ws {
		if len(w.Alloc.Allocations) == 0 {
			return fail(w, "allocations must not be empty for a consumer without a generation")
		}
		for rp, pa := range w.Alloc.Allocations {
			provUUIDs[rp] = true
			if len(pa.Resources) == 0 {
				return fail(w, fmt.Sprintf("resources of provider %s must not be empty", rp))
			}
			for rc := range pa.Resources {
				if _, ok := p.rcID[rc]; !ok {
					return fail(w, fmt.Sprintf("Unable to allocate inventory for consumer %s: No such resource class %s.", w.Consumer, rc))
				}
			}
		}
	}
	provs := map[string]*groupProvider{}
	uuids := slices.Sorted(maps.Keys(provUUIDs))
	if err := sqlutil.SelectIn(ctx, db, tx, `SELECT uuid, id, generation FROM resource_providers WHERE uuid IN (%s)`, uuids, func(r *sql.Rows) error {
		var u string
		gp := &groupProvider{}
		if err := r.Scan(&u, &gp.id, &gp.generation); err != nil {
			return err
		}
		provs[u] = gp
		return nil
	}); err != nil {
		return err
	}
	for _, w := range ws {
		for rp := range w.Alloc.Allocations {
			if provs[rp] == nil {
				return fail(w, fmt.Sprintf("Unable to find resource provider %s.", rp))
			}
		}
	}
	projects, err := ensureExternalIDs(ctx, db, tx, "projects", ws, func(w claims.Write) string { return w.Alloc.ProjectID })
	if err != nil {
		return err
	}
	users, err := ensureExternalIDs(ctx, db, tx, "users", ws, func(w claims.Write) string { return w.Alloc.UserID })
	if err != nil {
		return err
	}
	// A write naming a consumer type sets it, creating the type as
	// Placement's get_or_create_consumer_type_id does; one naming none
	// keeps the consumer's (a new consumer then has none).
	typed := slices.DeleteFunc(slices.Clone(ws), func(w claims.Write) bool { return !namesConsumerType(w.Alloc) })
	types, err := ensureNames(ctx, db, tx, "consumer_types", "name", typed, func(w claims.Write) string { return w.Alloc.ConsumerType })
	if err != nil {
		return err
	}
	typeOf := func(w claims.Write) sql.NullInt64 {
		if !namesConsumerType(w.Alloc) {
			return sql.NullInt64{}
		}
		return sql.NullInt64{Int64: types[w.Alloc.ConsumerType], Valid: true}
	}
	// Consumers: check generations, create the new ones, update project,
	// user and type of the existing ones.
	type consumerRow struct {
		id, generation, project, user int64
		ctype                         sql.NullInt64
	}
	existing := map[string]*consumerRow{}
	var cuuids []string
	for _, w := range ws {
		cuuids = append(cuuids, w.Consumer)
	}
	if err := sqlutil.SelectIn(ctx, db, tx, `SELECT uuid, id, generation, project_id, user_id, consumer_type_id FROM consumers WHERE uuid IN (%s)`, cuuids, func(r *sql.Rows) error {
		var u string
		c := &consumerRow{}
		if err := r.Scan(&u, &c.id, &c.generation, &c.project, &c.user, &c.ctype); err != nil {
			return err
		}
		existing[u] = c
		return nil
	}); err != nil {
		return err
	}
	now := db.Now()
	var created []claims.Write
	for _, w := range ws {
		c := existing[w.Consumer]
		want := w.Alloc.ConsumerGeneration
		switch {
		case c == nil && want != nil:
			return &claims.WriteError{Consumer: w.Consumer, Conflict: true, Detail: fmt.Sprintf("consumer generation conflict - expected null but got %d", *want)}
		case c != nil && (want == nil || *want != c.generation):
			got := "None"
			if want != nil {
				got = fmt.Sprint(*want)
			}
			return &claims.WriteError{Consumer: w.Consumer, Conflict: true, Detail: fmt.Sprintf("consumer generation conflict - expected %d but got %s", c.generation, got)}
		case c == nil:
			created = append(created, w)
		default:
			pid, uid, ctype := projects[w.Alloc.ProjectID], users[w.Alloc.UserID], c.ctype
			if t := typeOf(w); t.Valid {
				ctype = t
			}
			if pid != c.project || uid != c.user || ctype != c.ctype {
				if _, err := tx.ExecContext(ctx, db.Rebind(`UPDATE consumers SET project_id = ?, user_id = ?, consumer_type_id = ?, updated_at = ? WHERE id = ?`), pid, uid, ctype, now, c.id); err != nil {
					return db.Errorf("update consumer %s: %w", w.Consumer, storage.CleanError(err))
				}
			}
		}
	}
	if len(created) > 0 {
		ins := sqlutil.NewInserter(db, tx, "consumers", "created_at", "uuid", "project_id", "user_id", "consumer_type_id", "generation")
		for _, w := range created {
			if err := ins.Add(ctx, now, w.Consumer, projects[w.Alloc.ProjectID], users[w.Alloc.UserID], typeOf(w), 0); err != nil {
				return err
			}
		}
		if err := ins.Flush(ctx); err != nil {
			return err
		}
	}
	// Replace: old allocations go first, so that they do not count against
	// the new ones.
	if err := sqlutil.ExecIn(ctx, db, tx, `DELETE FROM allocations WHERE consumer_id IN (%s)`, nil, cuuids); err != nil {
		return err
	}
	inv := map[[2]int64]*claims.InventoryUse{}
	provIDs := make([]string, 0, len(provs))
	for _, gp := range provs {
		provIDs = append(provIDs, fmt.Sprint(gp.id))
	}
	sort.Strings(provIDs)
	if err := sqlutil.SelectIn(ctx, db, tx, `SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio FROM inventories WHERE resource_provider_id IN (%s)`, provIDs, func(r *sql.Rows) error {
		var k [2]int64
		gi := &claims.InventoryUse{}
		if err := r.Scan(&k[0], &k[1], &gi.Total, &gi.Reserved, &gi.MinUnit, &gi.MaxUnit, &gi.StepSize, &gi.AllocationRatio); err != nil {
			return err
		}
		inv[k] = gi
		return nil
	}); err != nil {
		return err
	}
	if err := sqlutil.SelectIn(ctx, db, tx, `SELECT resource_provider_id, resource_class_id, SUM(used) FROM allocations WHERE resource_provider_id IN (%s) GROUP BY resource_provider_id, resource_class_id`, provIDs, func(r *sql.Rows) error {
		var k [2]int64
		var used int64
		if err := r.Scan(&k[0], &k[1], &used); err != nil {
			return err
		}
		if gi := inv[k]; gi != nil {
			gi.Used = used
		}
		return nil
	}); err != nil {
		return err
	}
	alloc := sqlutil.NewInserter(db, tx, "allocations", "created_at", "resource_provider_id", "consumer_id", "resource_class_id", "used")
	for _, w := range ws {
		for _, rp := range slices.Sorted(maps.Keys(w.Alloc.Allocations)) {
			gp := provs[rp]
			gp.bumps++
			res := w.Alloc.Allocations[rp].Resources
			have := map[string]*claims.InventoryUse{}
			for rc := range res {
				if gi := inv[[2]int64{gp.id, p.rcID[rc]}]; gi != nil {
					have[rc] = gi
				}
			}
			if msg := claims.CheckAllocation(rp, res, have); msg != "" {
				return fail(w, msg)
			}
			for _, rc := range slices.Sorted(maps.Keys(res)) {
				n := res[rc]
				if n == 0 {
					continue
				}
				have[rc].Used += n
				if err := alloc.Add(ctx, now, gp.id, w.Consumer, p.rcID[rc], n); err != nil {
					return err
				}
			}
		}
	}
	if err := alloc.Flush(ctx); err != nil {
		return err
	}
	if err := bumpProviders(ctx, db, tx, uuids, provs, now); err != nil {
		return err
	}
	if err := p.recheckCapacity(ctx, tx, ws, provs, inv); err != nil {
		return err
	}
	// Consumers' generations by compare-and-swap too, one statement per
	// generation read (new consumers were inserted at 0).
	byGen := map[int64][]string{}
	for _, w := range ws {
		g := int64(0)
		if c := existing[w.Consumer]; c != nil {
			g = c.generation
		}
		byGen[g] = append(byGen[g], w.Consumer)
	}
	for g, us := range byGen {
		n, err := execInCount(ctx, db, tx, `UPDATE consumers SET generation = generation + 1, updated_at = ? WHERE generation = ? AND uuid IN (%s)`, []any{now, g}, us)
		if err != nil {
			return err
		}
		if n != int64(len(us)) {
			return errGenerationRace
		}
	}
	return nil
}

// providersPerBump bounds the providers of one bumpProviders statement.
const providersPerBump = 500

// bumpProviders increments each provider's generation by its bumps, from
// the generation read, by compare-and-swap: one statement for many
// providers (a round trip each had made heal cost most of a round trip per
// instance across the network, issue 35), which must change every one of
// them, else another writer changed one since this transaction read it.
func bumpProviders(ctx context.Context, db *storage.DB, tx *sqlx.Tx, uuids []string, provs map[string]*groupProvider, now any) error {
	for start := 0; start < len(uuids); start += providersPerBump {
		chunk := uuids[start:min(start+providersPerBump, len(uuids))]
		var set, cas, in strings.Builder
		var setArgs, casArgs, inArgs []any
		for i, u := range chunk {
			gp := provs[u]
			set.WriteString(" WHEN ? THEN ?")
			setArgs = append(setArgs, gp.id, gp.generation+gp.bumps)
			cas.WriteString(" WHEN ? THEN ?")
			casArgs = append(casArgs, gp.id, gp.generation)
			if i > 0 {
				in.WriteString(", ")
			}
			in.WriteString("?")
			inArgs = append(inArgs, gp.id)
		}
		q := "UPDATE resource_providers SET generation = CASE id" + set.String() + " END, updated_at = ? WHERE id IN (" + in.String() + ") AND generation = CASE id" + cas.String() + " END"
		args := append(setArgs, now)
		args = append(args, inArgs...)
		args = append(args, casArgs...)
		res, err := tx.ExecContext(ctx, db.Rebind(q), args...)
		if err != nil {
			return db.Errorf("update resource providers %s…: %w", chunk[0], storage.CleanError(err))
		}
		if n, err := res.RowsAffected(); err != nil {
			return db.Errorf("update resource providers %s…: %w", chunk[0], storage.CleanError(err))
		} else if n != int64(len(chunk)) {
			return errGenerationRace
		}
	}
	return nil
}

// execInCount is sqlutil.ExecIn returning the rows the statement changed.
func execInCount(ctx context.Context, db *storage.DB, tx *sqlx.Tx, q string, lead []any, vals []string) (int64, error) {
	var total int64
	for start := 0; start < len(vals); start += sqlutil.MaxInList {
		chunk := vals[start:min(start+sqlutil.MaxInList, len(vals))]
		args := append([]any{}, lead...)
		for _, v := range chunk {
			args = append(args, v)
		}
		res, err := tx.ExecContext(ctx, db.Rebind(fmt.Sprintf(q, sqlutil.InList(len(chunk)))), args...)
		if err != nil {
			return total, db.Errorf("%s: %w", sqlutil.FirstWords(q), storage.CleanError(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, db.Errorf("%s: %w", sqlutil.FirstWords(q), storage.CleanError(err))
		}
		total += n
	}
	return total, nil
}

// namesConsumerType: the write sets the consumer's type.
func namesConsumerType(a claims.Allocations) bool {
	return a.ConsumerType != "" && a.ConsumerType != claims.UnknownConsumerType
}

// ensureExternalIDs returns the internal ids of the projects (or users)
// the writes name, creating the missing records as Placement does.
func ensureExternalIDs(ctx context.Context, db *storage.DB, tx *sqlx.Tx, table string, ws []claims.Write, ext func(claims.Write) string) (map[string]int64, error) {
	return ensureNames(ctx, db, tx, table, "external_id", ws, ext)
}

// ensureNames returns the ids of the rows of table whose column holds the
// names the writes give, creating the missing rows.
func ensureNames(ctx context.Context, db *storage.DB, tx *sqlx.Tx, table, column string, ws []claims.Write, ext func(claims.Write) string) (map[string]int64, error) {
	want := map[string]bool{}
	for _, w := range ws {
		want[ext(w)] = true
	}
	names := slices.Sorted(maps.Keys(want))
	ids := map[string]int64{}
	read := func() error {
		return sqlutil.SelectIn(ctx, db, tx, `SELECT `+column+`, id FROM `+table+` WHERE `+column+` IN (%s)`, names, func(r *sql.Rows) error {
			var e string
			var id int64
			if err := r.Scan(&e, &id); err != nil {
				return err
			}
			ids[e] = id
			return nil
		})
	}
	if err := read(); err != nil {
		return nil, err
	}
	var missing []string
	for _, n := range names {
		if _, ok := ids[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	ins := sqlutil.NewInserter(db, tx, table, "created_at", column)
	now := db.Now()
	for _, n := range missing {
		if err := ins.Add(ctx, now, n); err != nil {
			return nil, err
		}
	}
	if err := ins.Flush(ctx); err != nil {
		return nil, err
	}
	if err := read(); err != nil {
		return nil, err
	}
	return ids, nil
}

// canonicalWrites is ws with every consumer and provider uuid in its
// canonical form (the caller's writes are not changed).
func canonicalWrites(ws []claims.Write) []claims.Write {
	out := make([]claims.Write, len(ws))
	for i, w := range ws {
		w.Consumer = canonicalUUID(w.Consumer)
		if len(w.Alloc.Allocations) > 0 {
			allocs := make(map[string]claims.ProviderAllocation, len(w.Alloc.Allocations))
			for rp, pa := range w.Alloc.Allocations {
				rp = canonicalUUID(rp)
				if have, ok := allocs[rp]; ok {
					// Two spellings of one provider: one provider's
					// resources, summed as a repeated --allocation is.
					res := maps.Clone(have.Resources)
					for rc, n := range pa.Resources {
						res[rc] += n
					}
					have.Resources = res
					pa = have
				}
				allocs[rp] = pa
			}
			w.Alloc.Allocations = allocs
		}
		if len(w.Alloc.Providers) > 0 {
			var provs []string
			for _, rp := range w.Alloc.Providers {
				if rp = canonicalUUID(rp); !slices.Contains(provs, rp) {
					provs = append(provs, rp)
				}
			}
			w.Alloc.Providers = provs
		}
		out[i] = w
	}
	return out
}

package placementdb

import (
	"context"
	"database/sql"
	"maps"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var _ inventory.TraitBatchStore = (*Store)(nil)

// traitsProvider is a provider as a traits batch reads it.
type traitsProvider struct {
	id     int64
	traits inventory.ProviderTraits
}

// providersTraits reads the providers of uuids with their traits (in
// trait id order, as ProviderTraits), keyed by uuid as stored.
func (s *Store) providersTraits(ctx context.Context, uuids []string) (map[string]*traitsProvider, error) {
	out := map[string]*traitsProvider{}
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		clear(out)
		return sqlutil.SelectIn(ctx, s.db, tx, `SELECT rp.uuid, rp.id, COALESCE(rp.generation, 0), tr.name
			FROM resource_providers rp LEFT JOIN resource_provider_traits t ON t.resource_provider_id = rp.id LEFT JOIN traits tr ON tr.id = t.trait_id
			WHERE rp.uuid IN (%s) ORDER BY rp.id, tr.id`, uuids, func(r *sql.Rows) error {
			var u string
			var id, gen int64
			var name sql.NullString
			if err := r.Scan(&u, &id, &gen, &name); err != nil {
				return err
			}
			p := out[u]
			if p == nil {
				p = &traitsProvider{id: id, traits: inventory.ProviderTraits{Generation: gen, Traits: []string{}}}
				out[u] = p
			}
			if name.Valid {
				p.traits.Traits = append(p.traits.Traits, name.String)
			}
			return nil
		})
	})
	if err != nil {
		return nil, s.fail("read provider traits", err)
	}
	return out, nil
}

// TraitsOf implements inventory.TraitBatchStore.
func (s *Store) TraitsOf(ctx context.Context, uuids []string) (map[string]inventory.ProviderTraits, error) {
	ps, err := s.providersTraits(ctx, uuids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]inventory.ProviderTraits, len(ps))
	for u, p := range ps {
		out[u] = p.traits
	}
	return out, nil
}

// SetProviderTraitsBatch implements inventory.TraitBatchStore with scripts
// (placement_script.go): each write is one transaction that increments the
// provider's generation from the one it was decided at (failing, as a
// generation conflict, when that matched no row), deletes the traits the
// provider loses and adds the ones it gains, as SetProviderTraits leaves
// them, then a marker SELECT; the first failure ends the batch, its
// transaction rolled back. A write the script cannot make as
// SetProviderTraits would (an unknown or invalid trait name, a provider not
// found, no change) ends the batch with errNotScripted before it is sent:
// the caller makes it through SetProviderTraits, whose answer it gets.
func (s *Store) SetProviderTraitsBatch(ctx context.Context, ws []inventory.TraitsSet) (int, error) {
	var c scriptConn
	if err := c.open(ctx, s.db); err != nil {
		if err == storage.ErrNoScripts {
			return 0, inventory.ErrNoBatch
		}
		return 0, err
	}
	defer c.release(false)
	ts, ok := sqlutil.AppendLiteral(nil, s.db.Now())
	if !ok {
		return 0, inventory.ErrNoBatch
	}
	ids, _, err := s.nameIDs(ctx, s.db, `SELECT id, name FROM traits`)
	if err != nil {
		return 0, s.fail("read traits", err)
	}
	uuids := make([]string, len(ws))
	for i, w := range ws {
		uuids[i] = w.UUID
	}
	have, err := s.providersTraits(ctx, uuids)
	if err != nil {
		return 0, err
	}
	done := 0
	for done < len(ws) {
		b := make([]byte, 0, 64<<10)
		to := done
		for to < len(ws) && (to == done || len(b) < sqlutil.MaxLiteralSQL) {
			script, ok := traitsScript(&ws[to], have[ws[to].UUID], ids, ts, to, scriptGuard(s.db.Galera))
			if !ok {
				break
			}
			b = append(b, script...)
			to++
		}
		if to == done {
			return done, errNotScripted
		}
		n, err := runScript(ctx, c.conn, string(b), done)
		done = n
		if err == nil {
			continue
		}
		if casFailed(err) {
			err = concurrentUpdate("")
		} else {
			err = s.db.Errorf("write provider traits %s: %w", ws[done].UUID, storage.CleanError(err))
		}
		return done, c.scriptFailed(ctx, err)
	}
	return done, nil
}

// traitsScript is w's transaction and marker k as SQL, or false when it is
// left to SetProviderTraits (see SetProviderTraitsBatch). p is the provider
// as read, nil when it was not found.
func traitsScript(w *inventory.TraitsSet, p *traitsProvider, ids map[string]int64, ts []byte, k int, g scriptGuard) ([]byte, bool) {
	if p == nil {
		return nil, false
	}
	want := map[int64]bool{}
	for _, t := range w.Traits {
		id, known := ids[t]
		if !known || t == "" || len(t) > 255 {
			return nil, false
		}
		want[id] = true
	}
	cur := map[int64]bool{}
	for _, t := range p.traits.Traits {
		cur[ids[t]] = true
	}
	var add, del []int64
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if !cur[id] {
			add = append(add, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(cur)) {
		if !want[id] {
			del = append(del, id)
		}
	}
	if len(add) == 0 && len(del) == 0 {
		return nil, false // _set_traits leaves the generation alone
	}
	ok := true
	lit := func(b []byte, v any) []byte {
		b, good := sqlutil.AppendLiteral(b, v)
		ok = ok && good
		return b
	}
	b := append(g.begin(make([]byte, 0, 512)), "UPDATE resource_providers SET generation = "...)
	b = lit(b, w.Generation+1)
	b = append(append(b, ", updated_at = "...), ts...)
	b = lit(append(b, " WHERE id = "...), p.id)
	b = g.and(lit(append(b, " AND generation = "...), w.Generation))
	b = append(b, ";\nSET @rpctl_generation_check = (SELECT 1 FROM (SELECT 1 UNION ALL SELECT 2) two WHERE ROW_COUNT() <> 1);\n"...)
	if len(del) > 0 {
		b = lit(append(b, "DELETE FROM resource_provider_traits WHERE resource_provider_id = "...), p.id)
		b = append(append(b, " AND trait_id IN ("...), sqlutil.SQLInts(del)...)
		b = append(g.and(append(b, ')')), ";\n"...)
	}
	if len(add) > 0 {
		// A link already there (written meanwhile by a client that does
		// not increment the generation) stays, as SetProviderTraits
		// skips a duplicate.
		b = g.values(append(b, "INSERT INTO resource_provider_traits (resource_provider_id, trait_id, created_at) "...))
		for i, id := range add {
			if i > 0 {
				b = append(b, g.sep()...)
			}
			b = lit(g.open(b), p.id)
			b = lit(append(b, ", "...), id)
			b = g.close(append(append(b, ", "...), ts...))
		}
		b = append(b, " ON DUPLICATE KEY UPDATE created_at = resource_provider_traits.created_at;\n"...)
	}
	return g.commit(b, k), ok
}

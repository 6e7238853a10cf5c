package placementdb

import (
	"context"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var (
	_ migrate.AggregatePlacement = (*Store)(nil)
	_ migrate.AggregateScanner   = (*Store)(nil)
)

// AllProviderAggregates implements migrate.AggregateScanner: every
// provider's generation and aggregates (in placement_aggregates id order,
// as GET /resource_providers/{uuid}/aggregates lists them) in one read.
func (s *Store) AllProviderAggregates(ctx context.Context) (map[string]migrate.ProviderAggregates, error) {
	out := map[string]migrate.ProviderAggregates{}
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		clear(out)
		rows, err := tx.QueryContext(ctx, `SELECT rp.uuid, rp.generation, pa.uuid FROM resource_providers rp
			LEFT JOIN resource_provider_aggregates a ON a.resource_provider_id = rp.id
			LEFT JOIN placement_aggregates pa ON pa.id = a.aggregate_id
			ORDER BY rp.id, pa.id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u string
			var gen int64
			var agg *string
			if err := rows.Scan(&u, &gen, &agg); err != nil {
				return err
			}
			u = sqlutil.FoldUUID(u) // as the cells' node uuids are read
			pa := out[u]
			pa.Generation = gen
			if agg != nil {
				pa.Aggregates = append(pa.Aggregates, *agg)
			}
			out[u] = pa
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail("read provider aggregates", err)
	}
	return out, nil
}

var _ migrate.AggregateBatchWriter = (*Store)(nil)

// aggregateCASFailed is the error a script's generation check raises: a
// scalar subquery of two rows (1242, "Subquery returns more than 1 row"),
// the one way a plain statement fails on a condition in every MySQL and
// MariaDB (DO discards the error on MariaDB; SET does not).
const aggregateCASFailed = 1242

// WriteAggregates implements migrate.AggregateBatchWriter with scripts (see
// placement_script.go): each provider's change is one transaction that
// increments its generation from the one it was decided at, fails when
// that matched no row (another writer, or the provider is gone), creates
// the aggregates it adds when missing (Placement's _ensure_aggregate, in
// the same transaction) and adds and removes the memberships; then a
// marker SELECT. Many such transactions go in one round trip; the first
// statement that fails ends the batch there, its transaction rolled back.
// A change the script cannot write as Placement would (an aggregate that
// is not a uuid) fails with an error the caller answers by writing it
// through SetProviderAggregates, whose own error it then gets.
func (s *Store) WriteAggregates(ctx context.Context, ws []migrate.AggregateWrite) (int, error) {
	var c scriptConn
	if err := c.open(ctx, s.db); err != nil {
		if err == storage.ErrNoScripts {
			return 0, migrate.ErrNoBatch
		}
		return 0, err
	}
	defer c.release(false)
	ts, ok := sqlutil.AppendLiteral(nil, s.db.Now())
	if !ok {
		return 0, migrate.ErrNoBatch
	}
	done := 0
	for done < len(ws) {
		b := make([]byte, 0, 64<<10)
		to := done
		for to < len(ws) && (to == done || len(b) < sqlutil.MaxLiteralSQL) {
			script, ok := aggregateScript(&ws[to], ts, to, scriptGuard(s.db.Galera))
			if !ok {
				break
			}
			b = append(b, script...)
			to++
		}
		if to == done {
			return done, s.db.Errorf("write provider aggregates %s: an aggregate that is not a uuid", ws[done].Provider)
		}
		n, err := runScript(ctx, c.conn, string(b), done)
		done = n
		if err == nil {
			continue
		}
		if casFailed(err) {
			err = concurrentUpdate("Update conflict: ")
		} else {
			err = s.db.Errorf("write provider aggregates %s: %w", ws[done].Provider, storage.CleanError(err))
		}
		return done, c.scriptFailed(ctx, err)
	}
	return done, nil
}

// aggregateScript is w's transaction and marker k as SQL, or false when an
// aggregate is not a uuid.
func aggregateScript(w *migrate.AggregateWrite, ts []byte, k int, g scriptGuard) ([]byte, bool) {
	ok := true
	lit := func(b []byte, v any) []byte {
		b, good := sqlutil.AppendLiteral(b, v)
		ok = ok && good
		return b
	}
	list := func(b []byte, uuids []string) []byte {
		for i, a := range uuids {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = lit(b, a)
		}
		return b
	}
	canon := func(uuids []string) []string {
		out := make([]string, 0, len(uuids))
		for _, a := range uuids {
			ok = ok && candidates.UUIDLike(a)
			if a = canonicalUUID(a); !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		return out
	}
	add, remove := canon(w.Add), canon(w.Remove)
	b := append(g.begin(make([]byte, 0, 1024)), "UPDATE resource_providers SET generation = "...)
	b = lit(b, w.Generation+1)
	b = append(append(b, ", updated_at = "...), ts...)
	b = lit(append(b, " WHERE uuid = "...), w.Provider)
	b = g.and(lit(append(b, " AND generation = "...), w.Generation))
	b = append(b, ";\nSET @rpctl_generation_check = (SELECT 1 FROM (SELECT 1 UNION ALL SELECT 2) two WHERE ROW_COUNT() <> 1);\n"...)
	for _, a := range add {
		b = append(append(b, "INSERT INTO placement_aggregates (created_at, uuid) SELECT "...), ts...)
		b = lit(append(b, ", "...), a)
		b = lit(append(b, " FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM placement_aggregates WHERE uuid = "...), a)
		b = append(g.and(append(b, ')')), ";\n"...)
	}
	if len(add) > 0 {
		// A membership already there (written by a client that does not
		// increment the generation) stays as it is, as
		// SetProviderAggregates skips it.
		b = append(append(b, "INSERT INTO resource_provider_aggregates (created_at, resource_provider_id, aggregate_id) SELECT "...), ts...)
		b = append(b, ", rp.id, pa.id FROM resource_providers rp JOIN placement_aggregates pa ON pa.uuid IN ("...)
		b = g.and(lit(append(list(b, add), ") WHERE rp.uuid = "...), w.Provider))
		b = append(b, " ON DUPLICATE KEY UPDATE created_at = resource_provider_aggregates.created_at;\n"...)
	}
	if len(remove) > 0 {
		b = lit(append(b, "DELETE FROM resource_provider_aggregates WHERE resource_provider_id = (SELECT id FROM resource_providers WHERE uuid = "...), w.Provider)
		b = append(g.and(append(list(append(b, ") AND aggregate_id IN (SELECT id FROM placement_aggregates WHERE uuid IN ("...), remove), "))"...)), ";\n"...)
	}
	return g.commit(b, k), ok
}

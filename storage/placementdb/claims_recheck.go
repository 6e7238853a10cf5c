package placementdb

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// afterGroupWrite, when a test sets it, runs inside a claim group's
// transaction once its rows are written, before they are re-checked and
// committed: where another writer's rows can land unseen.
var afterGroupWrite func(ctx context.Context, tx *sqlx.Tx)

// recheckCapacity reads the usage of every provider the group wrote with a
// locking read, after the group's own rows are in, and refuses the group
// when claims.CheckWritten does. The first check read the transaction's
// snapshot; a writer that added allocations without taking the provider's
// row (hand-written SQL, a tool of its own) or that commits while this one
// waits is only seen by a locking read, and Placement 8.0.0 itself can
// commit an over-commit under such a race (docs, "Placement's over-commit
// race"): rpctl's writer re-checks so that its own commit never completes
// one. On MySQL the read waits for (or deadlocks with, and is retried
// after) a writer holding uncommitted allocations of the same provider.
func (p *ClaimsPlacement) recheckCapacity(ctx context.Context, tx *sqlx.Tx, ws []claims.Write, provs map[string]*groupProvider, inv map[[2]int64]*claims.InventoryUse) error {
	db := p.DB
	if afterGroupWrite != nil {
		afterGroupWrite(ctx, tx)
	}
	ids := make([]string, 0, len(provs))
	for _, gp := range provs {
		ids = append(ids, fmt.Sprint(gp.id))
	}
	sort.Strings(ids)
	used := map[[2]int64]int64{}
	if err := sqlutil.SelectIn(ctx, db, tx, `SELECT resource_provider_id, resource_class_id, SUM(used) FROM allocations WHERE resource_provider_id IN (%s) GROUP BY resource_provider_id, resource_class_id`+db.ForUpdate(), ids, func(r *sql.Rows) error {
		var k [2]int64
		var n int64
		if err := r.Scan(&k[0], &k[1], &n); err != nil {
			return err
		}
		used[k] = n
		return nil
	}); err != nil {
		return err
	}
	for _, w := range ws {
		for _, rp := range slices.Sorted(maps.Keys(w.Alloc.Allocations)) {
			gp := provs[rp]
			res := w.Alloc.Allocations[rp].Resources
			now := map[string]*claims.InventoryUse{}
			for rc := range res {
				k := [2]int64{gp.id, p.rcID[rc]}
				if gi := inv[k]; gi != nil {
					now[rc] = &claims.InventoryUse{Inventory: gi.Inventory, Used: used[k]}
				}
			}
			if msg := claims.CheckWritten(rp, res, now); msg != "" {
				return &claims.WriteError{Consumer: w.Consumer, Detail: msg}
			}
		}
	}
	return nil
}

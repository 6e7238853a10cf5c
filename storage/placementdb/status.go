package placementdb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// The queries of `rpctl status`. Each is one aggregate or one bulk read per
// database, never a query per node: the checks must finish on 100,000 nodes
// within seconds. Cell and Placement databases are separate servers in
// practice, so the checks join across them in Go.

// ListProviderTotals reads every resource provider with its standard
// compute-node inventory totals: one scan of resource_providers and one of
// the VCPU/MEMORY_MB/DISK_GB inventories, joined here by id (a GROUP BY over
// 100,000 providers costs MariaDB seconds).
func ListProviderTotals(ctx context.Context, p *storage.DB) ([]status.ProviderTotals, error) {
	rows, err := p.QueryContext(ctx, `SELECT id, uuid, COALESCE(name, ''), CASE WHEN parent_provider_id IS NULL THEN 1 ELSE 0 END, COALESCE(parent_provider_id, 0), COALESCE(root_provider_id, 0) FROM resource_providers`)
	if err != nil {
		return nil, p.Errorf("read resource_providers: %w", storage.CleanError(err))
	}
	var out []status.ProviderTotals
	index := map[int64]int{}
	var links [][2]int64 // parent and root ids, by index
	for rows.Next() {
		var t status.ProviderTotals
		var id, parent, rootID int64
		var root int
		if err := rows.Scan(&id, &t.UUID, &t.Name, &root, &parent, &rootID); err != nil {
			rows.Close()
			return nil, p.Errorf("read resource_providers: %w", storage.CleanError(err))
		}
		// Folded as the cells' node uuids are (sqlutil.FoldUUID): a provider an
		// earlier rpctl stored upper case is still its node's.
		t.UUID = sqlutil.FoldUUID(t.UUID)
		t.Root = root == 1
		index[id] = len(out)
		out = append(out, t)
		links = append(links, [2]int64{parent, rootID})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, p.Errorf("read resource_providers: %w", storage.CleanError(err))
	}
	if err := providerTreeLinks(ctx, p, out, index, links); err != nil {
		return nil, err
	}
	// Class ids first, so that the 300,000 inventory rows come back as
	// three integers each, without a join or a class name per row.
	var classes []struct {
		ID   int64  `db:"id"`
		Name string `db:"name"`
	}
	if err := p.SelectContext(ctx, &classes, `SELECT id, name FROM resource_classes WHERE name IN ('VCPU', 'MEMORY_MB', 'DISK_GB')`); err != nil {
		return nil, p.Errorf("read resource_classes: %w", storage.CleanError(err))
	}
	if len(classes) > 0 {
		slot := map[int64]int{}
		var idl []int64
		for _, c := range classes {
			slot[c.ID] = map[string]int{"VCPU": 0, "MEMORY_MB": 1, "DISK_GB": 2}[c.Name]
			idl = append(idl, c.ID)
		}
		rows, err = p.QueryContext(ctx, `SELECT resource_provider_id, resource_class_id, total FROM inventories WHERE resource_class_id IN (`+sqlutil.SQLInts(idl)+`)`)
		if err != nil {
			return nil, p.Errorf("read inventories: %w", storage.CleanError(err))
		}
		for rows.Next() {
			var id, class, total int64
			if err := rows.Scan(&id, &class, &total); err != nil {
				rows.Close()
				return nil, p.Errorf("read inventories: %w", storage.CleanError(err))
			}
			i, ok := index[id]
			if !ok {
				continue
			}
			v := total
			switch slot[class] {
			case 0:
				out[i].VCPU = &v
			case 1:
				out[i].Memory = &v
			case 2:
				out[i].Disk = &v
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, p.Errorf("read inventories: %w", storage.CleanError(err))
		}
	}
	var sharing []string
	if err := p.SelectContext(ctx, &sharing, `SELECT rp.uuid FROM resource_provider_traits rpt
		JOIN traits t ON t.id = rpt.trait_id JOIN resource_providers rp ON rp.id = rpt.resource_provider_id
		WHERE t.name = 'MISC_SHARES_VIA_AGGREGATE'`); err != nil {
		return nil, p.Errorf("read resource_provider_traits: %w", storage.CleanError(err))
	}
	if len(sharing) > 0 {
		set := make(map[string]bool, len(sharing))
		for _, u := range sharing {
			set[sqlutil.FoldUUID(u)] = true
		}
		for i := range out {
			out[i].Sharing = set[out[i].UUID]
		}
	}
	return out, nil
}

// ListOverusedInventories returns the inventories whose summed allocations
// exceed Placement's capacity, worst first. SQL narrows the candidates with
// a little slack, since MySQL's FLOAT ratio is single precision; Go decides
// with the ratio as written.
func ListOverusedInventories(ctx context.Context, p *storage.DB) ([]status.Overuse, error) {
	// The inner query walks allocations' (provider, class, used) index in
	// group order and looks each group's inventory up by its unique key;
	// only the few over-used groups meet the outer joins.
	rows, err := p.QueryContext(ctx, `SELECT rp.uuid, COALESCE(rp.name, ''), COALESCE(rc.name, ''), o.total, o.reserved, o.allocation_ratio, o.used
		FROM (SELECT a.resource_provider_id AS rp_id, a.resource_class_id AS rc_id, SUM(a.used) AS used,
		             i.total AS total, i.reserved AS reserved, i.allocation_ratio AS allocation_ratio
		      FROM allocations a
		      JOIN inventories i ON i.resource_provider_id = a.resource_provider_id AND i.resource_class_id = a.resource_class_id
		      GROUP BY a.resource_provider_id, a.resource_class_id, i.total, i.reserved, i.allocation_ratio
		      HAVING SUM(a.used) > (i.total - i.reserved) * i.allocation_ratio * 0.999) o
		JOIN resource_providers rp ON rp.id = o.rp_id
		LEFT JOIN resource_classes rc ON rc.id = o.rc_id
		ORDER BY rp.name, rp.uuid, rc.name`)
	if err != nil {
		return nil, p.Errorf("read allocations and inventories: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []status.Overuse
	for rows.Next() {
		var o status.Overuse
		var ratio sql.NullFloat64
		if err := rows.Scan(&o.UUID, &o.Name, &o.Class, &o.Total, &o.Reserved, &ratio, &o.Used); err != nil {
			return nil, p.Errorf("read allocations and inventories: %w", storage.CleanError(err))
		}
		o.UUID = sqlutil.FoldUUID(o.UUID)
		o.AllocationRatio = *p.FloatPtr(ratio)
		if float64(o.Used) > o.Capacity() {
			out = append(out, o)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, p.Errorf("read allocations and inventories: %w", storage.CleanError(err))
	}
	return out, nil
}

// MissingRootProviderIDs reports whether any resource provider lacks its
// root_provider_id, what placement-status's first check looks for.
func MissingRootProviderIDs(ctx context.Context, p *storage.DB) (bool, error) {
	var n int
	if err := p.GetContext(ctx, &n, `SELECT CASE WHEN EXISTS (SELECT 1 FROM resource_providers WHERE root_provider_id IS NULL) THEN 1 ELSE 0 END`); err != nil {
		return false, p.Errorf("read resource_providers: %w", storage.CleanError(err))
	}
	return n == 1, nil
}

// IncompleteConsumers counts the distinct consumers of allocations that have
// no consumers row, what placement-status's second check counts.
func IncompleteConsumers(ctx context.Context, p *storage.DB) (int, error) {
	var n int
	if err := p.GetContext(ctx, &n, `SELECT COUNT(DISTINCT a.consumer_id) FROM allocations a
		LEFT OUTER JOIN consumers c ON a.consumer_id = c.uuid WHERE c.id IS NULL`); err != nil {
		return 0, p.Errorf("read allocations and consumers: %w", storage.CleanError(err))
	}
	return n, nil
}

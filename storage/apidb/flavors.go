package apidb

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// ListFlavors reads the API database's flavors with their extra specs, in
// id order. A non-empty name keeps only the flavor of that name (Nova's
// names are unique) or, failing that, of that flavorid, as
// `openstack flavor show` looks a flavor up.
func ListFlavors(ctx context.Context, api *storage.DB, name string) ([]nova.Flavor, error) {
	var out []nova.Flavor
	err := api.Tx(ctx, func(tx *sqlx.Tx) error {
		out = nil // a retried transaction starts over
		q := "SELECT id, flavorid, name, memory_mb, vcpus, root_gb, ephemeral_gb, swap, rxtx_factor, vcpu_weight, disabled, is_public, description FROM flavors"
		var args []any
		if name != "" {
			q += " WHERE name = ? OR flavorid = ?"
			args = append(args, name, name)
		}
		rows, err := tx.QueryContext(ctx, api.Rebind(q+" ORDER BY id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		byID := map[int64]int{}
		for rows.Next() {
			var f nova.Flavor
			var weight sql.NullInt64
			var desc sql.NullString
			var rxtx sql.NullFloat64
			var disabled, public sql.NullBool
			if err := rows.Scan(&f.ID, &f.FlavorID, &f.Name, &f.MemoryMB, &f.VCPUs, &f.RootGB, &f.EphemeralGB, &f.Swap,
				&rxtx, &weight, &disabled, &public, &desc); err != nil {
				return err
			}
			f.RxtxFactor, f.VCPUWeight, f.Description = rxtx.Float64, sqlutil.IntPtr(weight), sqlutil.StrPtr(desc)
			f.Disabled, f.IsPublic = disabled.Bool, public.Bool
			f.ExtraSpecs = map[string]string{}
			byID[f.ID] = len(out)
			out = append(out, f)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if name != "" && len(out) > 1 {
			// A name matching one flavor and a flavorid matching another:
			// the name wins, as in novaclient's find.
			for i := range out {
				if out[i].Name == name {
					out = out[i : i+1]
					byID = map[int64]int{out[0].ID: 0}
					break
				}
			}
		}
		specs, err := tx.QueryContext(ctx, `SELECT flavor_id, `+api.QuoteKey()+`, value FROM flavor_extra_specs ORDER BY id`)
		if err != nil {
			return err
		}
		defer specs.Close()
		for specs.Next() {
			var id int64
			var k, v string
			if err := specs.Scan(&id, &k, &v); err != nil {
				return err
			}
			if i, ok := byID[id]; ok {
				out[i].ExtraSpecs[k] = v
			}
		}
		return specs.Err()
	})
	if err != nil {
		return nil, api.Errorf("read flavors: %w", storage.CleanError(err))
	}
	return out, nil
}

// AggregateNames maps Nova host aggregate UUIDs (which Nova mirrors as
// Placement aggregates) to their names, from the API database's
// aggregates table; an API database without that table (rpctl's embedded
// schema has none) gives an empty map.
func AggregateNames(ctx context.Context, api *storage.DB) (map[string]string, error) {
	out := map[string]string{}
	ok, err := api.TableExists(ctx, "aggregates")
	if err != nil || !ok {
		return out, err
	}
	rows, err := api.QueryContext(ctx, "SELECT uuid, name FROM aggregates WHERE uuid IS NOT NULL")
	if err != nil {
		return nil, api.Errorf("read aggregates: %w", storage.CleanError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		var n sql.NullString
		if err := rows.Scan(&u, &n); err != nil {
			return nil, api.Errorf("read aggregates: %w", storage.CleanError(err))
		}
		out[u] = n.String
	}
	if err := rows.Err(); err != nil {
		return nil, api.Errorf("read aggregates: %w", storage.CleanError(err))
	}
	return out, nil
}

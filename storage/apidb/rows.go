package apidb

import (
	"context"
	"maps"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// flavorSpec is one flavor_extra_specs row.
type flavorSpec struct {
	f   *nova.Flavor
	key string
}

// InsertAPIRows writes rows into the API database in one transaction.
func InsertAPIRows(ctx context.Context, api *storage.DB, r nova.APIRows) error {
	var specs []flavorSpec
	for i := range r.Flavors {
		for _, k := range sortedKeys(r.Flavors[i].ExtraSpecs) {
			specs = append(specs, flavorSpec{&r.Flavors[i], k})
		}
	}
	// Asked before the transaction: SQLite's one connection is the
	// transaction's until it ends.
	hasAggs, err := api.TableExists(ctx, "aggregates")
	if err != nil {
		return err
	}
	if len(r.Aggregates) > 0 && !hasAggs {
		return api.Errorf("the API database has no aggregates table (its schema predates them): run nova-manage api_db sync, or rpctl init on a new database")
	}
	return api.Tx(ctx, func(tx *sqlx.Tx) error {
		if r.Replace {
			if err := sqlutil.ClearTables(ctx, api, tx, "host_mappings", "instance_mappings", "flavor_extra_specs", "flavors"); err != nil {
				return err
			}
			if hasAggs {
				if err := sqlutil.ClearTables(ctx, api, tx, "aggregate_hosts", "aggregate_metadata", "aggregates"); err != nil {
					return err
				}
			}
		}
		if err := insertAggregates(ctx, api, tx, r.Aggregates); err != nil {
			return err
		}
		if err := sqlutil.InsertAll(ctx, api, tx, "cell_mappings", []string{"id", "created_at", "uuid", "name", "transport_url", "database_connection", "disabled"},
			r.CellMappings, func(c *nova.CellMapping) []any {
				return []any{c.ID, api.TimeArg(c.CreatedAt), c.UUID, c.Name, c.TransportURL, c.DatabaseConnection, c.Disabled}
			}); err != nil {
			return err
		}
		if err := sqlutil.InsertAll(ctx, api, tx, "host_mappings", []string{"id", "created_at", "cell_id", "host"},
			r.HostMappings, func(h *nova.HostMapping) []any {
				return []any{h.ID, api.TimeArg(h.CreatedAt), h.CellID, h.Host}
			}); err != nil {
			return err
		}
		if err := sqlutil.InsertAll(ctx, api, tx, "flavors", []string{"id", "created_at", "flavorid", "name", "memory_mb", "vcpus", "root_gb",
			"ephemeral_gb", "swap", "rxtx_factor", "vcpu_weight", "disabled", "is_public", "description"},
			r.Flavors, func(f *nova.Flavor) []any {
				return []any{f.ID, api.TimeArg(f.CreatedAt), f.FlavorID, f.Name, f.MemoryMB, f.VCPUs, f.RootGB,
					f.EphemeralGB, f.Swap, f.RxtxFactor, sqlutil.Ptr(f.VCPUWeight), f.Disabled, f.IsPublic, sqlutil.Ptr(f.Description)}
			}); err != nil {
			return err
		}
		if err := sqlutil.InsertAll(ctx, api, tx, "instance_mappings", []string{"created_at", "instance_uuid", "cell_id", "project_id", "user_id", "queued_for_delete"},
			r.InstanceMappings, func(m *nova.InstanceMapping) []any {
				return []any{api.TimeArg(m.CreatedAt), m.InstanceUUID, sqlutil.Ptr(m.CellID), m.ProjectID, sqlutil.Ptr(m.UserID), false}
			}); err != nil {
			return err
		}
		return sqlutil.InsertAll(ctx, api, tx, "flavor_extra_specs", []string{"created_at", "flavor_id", "key", "value"},
			specs, func(s *flavorSpec) []any {
				return []any{api.TimeArg(s.f.CreatedAt), s.f.ID, s.key, s.f.ExtraSpecs[s.key]}
			})
	})
}

func sortedKeys(m map[string]string) []string {
	// Sorted so that flavor_extra_specs ids are deterministic.
	return slices.Sorted(maps.Keys(m))
}

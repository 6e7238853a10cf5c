package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/storage"
)

// PlacementRows prints what a Placement database holds of its providers,
// keyed by uuids and names rather than ids, so that two databases written
// by different writers (rpctl's transactions, placement-api's requests,
// which number providers and aggregates in another order) can be compared
// row for row: every provider with its name, generation, parent and root,
// every inventory with every field (the ratio as the server prints it),
// the custom classes, the traits and the aggregate memberships, and
// whether created_at is set. updated_at is left out: placement-api sets it
// on the rows a PUT rewrites (a provider's generation bump), rpctl's
// database path on the rows it updates, and both are wall-clock times.
func PlacementRows(t testing.TB, db *storage.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT rp.uuid, COALESCE(rp.name, ''), rp.generation, COALESCE(p.uuid, ''), COALESCE(r.uuid, ''), rp.created_at IS NULL
			FROM resource_providers rp LEFT JOIN resource_providers p ON p.id = rp.parent_provider_id
			LEFT JOIN resource_providers r ON r.id = rp.root_provider_id ORDER BY rp.uuid`,
		`SELECT rp.uuid, rc.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, CAST(i.allocation_ratio AS CHAR), i.created_at IS NULL
			FROM inventories i JOIN resource_providers rp ON rp.id = i.resource_provider_id JOIN resource_classes rc ON rc.id = i.resource_class_id
			ORDER BY rp.uuid, rc.name`,
		`SELECT name FROM resource_classes WHERE id >= 10000 ORDER BY name`,
		`SELECT rp.uuid, tr.name FROM resource_provider_traits t JOIN resource_providers rp ON rp.id = t.resource_provider_id
			JOIN traits tr ON tr.id = t.trait_id ORDER BY rp.uuid, tr.name`,
		`SELECT rp.uuid, pa.uuid FROM resource_provider_aggregates a JOIN resource_providers rp ON rp.id = a.resource_provider_id
			JOIN placement_aggregates pa ON pa.id = a.aggregate_id ORDER BY rp.uuid, pa.uuid`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					vals[i] = string(bs)
				}
			}
			fmt.Fprintln(&b, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		b.WriteString("--\n")
	}
	return b.String()
}

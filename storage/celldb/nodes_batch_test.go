package celldb

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rpctl/rpctl/claims"
)

// TestComputeNodeUUIDsAsOneByOne (issue 35): the batched lookup answers
// every key exactly as ComputeNodeUUID alone does, on SQLite and MariaDB
// (whose collation ignores case and trailing spaces): the oldest live row,
// a NULL uuid as "", a deleted row as none, an unknown key absent; also
// over more keys than one statement takes.
func TestComputeNodeUUIDsAsOneByOne(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(*testing.T) *openedCell{"sqlite": sqliteCellFor, "mariadb": mysqlCellFor} {
		t.Run(name, func(t *testing.T) {
			c := open(t)
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := c.cell.DB.ExecContext(ctx, c.cell.DB.Rebind(q), args...); err != nil {
					t.Fatal(err)
				}
			}
			ins := "INSERT INTO compute_nodes (created_at, host, hypervisor_hostname, uuid, deleted, vcpus, memory_mb, local_gb, vcpus_used, memory_mb_used, local_gb_used, hypervisor_type, hypervisor_version, cpu_info) VALUES ('2022-01-01 00:00:00', ?, ?, ?, ?, 1, 1, 1, 0, 0, 0, 'QEMU', 1, '{}')"
			exec(ins, "h1", "n1", "00000000-0000-4000-8000-000000000009", 7) // an older, deleted row
			exec(ins, "h1", "n1", "00000000-0000-4000-8000-000000000001", 0)
			exec(ins, "h2", "n2", nil, 0)
			exec(ins, "h3", "n3", "00000000-0000-4000-8000-000000000003", 3)
			exec(ins, "Mixed", "n4", "00000000-0000-4000-8000-000000000004", 0)
			keys := []claims.HostNode{{Host: "h1", Node: "n1"}, {Host: "h2", Node: "n2"}, {Host: "h3", Node: "n3"}, {Host: "mixed", Node: "n4"}, {Host: "MIXED ", Node: "n4"}, {Host: "", Node: "n1"}, {Host: "h1", Node: "nope"}, {Host: "o'hara", Node: `n\1`}}
			for i := range 450 {
				exec(ins, fmt.Sprintf("many%d", i), "m", fmt.Sprintf("00000000-0000-4000-8000-%012d", 1000+i), 0)
				keys = append(keys, claims.HostNode{Host: fmt.Sprintf("many%d", i), Node: "m"})
			}
			got, err := c.cell.ComputeNodeUUIDs(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, k := range keys {
				want, err := c.cell.ComputeNodeUUID(ctx, k.Host, k.Node)
				u, ok := got[k]
				switch {
				case errors.Is(err, claims.ErrComputeHostNotFound):
					if ok {
						t.Errorf("%q: batched %q, alone not found", k, u)
					}
				case err != nil:
					t.Fatal(err)
				case !ok || u != want:
					t.Errorf("%q: batched %q (%v), alone %q", k, u, ok, want)
				default:
					found++
				}
			}
			if found < 450 {
				t.Errorf("only %d keys found", found)
			}
		})
	}
}

type openedCell struct{ cell *Cell }

func sqliteCellFor(t *testing.T) *openedCell { return &openedCell{&Cell{DB: openSQLiteCell(t)}} }
func mysqlCellFor(t *testing.T) *openedCell  { return &openedCell{&Cell{DB: openMySQLCell(t)}} }

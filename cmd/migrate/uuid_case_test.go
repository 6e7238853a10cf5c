package migrate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestUpperCaseNodeUUIDs (issue 37 row 14): a compute node whose row spells
// its uuid upper case gets the provider placement-api would have created
// for it — str(uuid.UUID(...)), lower case — on both backends; a provider
// an earlier rpctl stored upper case is updated in place, not duplicated
// or refused as a name conflict; every instance's allocation is served
// and status passes.
func TestUpperCaseNodeUUIDs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	ctx := context.Background()
	for _, be := range []struct {
		name string
		open func(*testing.T) matrixCloud
	}{{"sqlite", matrixSQLite}, {"mariadb", matrixMariaDB}} {
		t.Run(be.name, func(t *testing.T) {
			c := be.open(t)
			rpctl := func(args ...string) {
				t.Helper()
				if out, errOut, code := cmdtest.Rpctl(t, append(append([]string{}, c.args...), args...)...); code != 0 {
					t.Fatalf("%v: exit %d:\n%s%s", args, code, out, errOut)
				}
			}
			rpctl("sample-cloud", "--seed", "3", "--nodes", "8")
			type node struct {
				ID   int64  `db:"id"`
				UUID string `db:"-"`
				Name string `db:"hypervisor_hostname"`
			}
			var nodes []node
			if err := c.cell.SelectContext(ctx, &nodes, `SELECT id, hypervisor_hostname FROM compute_nodes WHERE deleted = 0 ORDER BY id LIMIT 3`); err != nil {
				t.Fatal(err)
			}
			if len(nodes) < 3 {
				t.Fatalf("the sample cloud has %d nodes", len(nodes))
			}
			for i := range nodes {
				nodes[i].UUID = fmt.Sprintf("c0ffee%02d-aaaa-4bbb-8ccc-dddddddddddd", i)
				if _, err := c.cell.ExecContext(ctx, c.cell.Rebind(`UPDATE compute_nodes SET uuid = ? WHERE id = ?`), strings.ToUpper(nodes[i].UUID), nodes[i].ID); err != nil {
					t.Fatal(err)
				}
			}
			// stored is every spelling of name's provider uuid in Placement.
			stored := func(name string) []string {
				t.Helper()
				var got []string
				if err := c.placement.SelectContext(ctx, &got, c.placement.Rebind(`SELECT uuid FROM resource_providers WHERE name = ?`), name); err != nil {
					t.Fatal(err)
				}
				return got
			}
			if n := c.migrateAll(t, nil); n == 0 {
				t.Fatal("migrate all wrote nothing")
			}
			for _, n := range nodes {
				if got := stored(n.Name); len(got) != 1 || got[0] != n.UUID {
					t.Errorf("%s: providers %q, want one, %s (lower case, as placement-api stores it)", n.Name, got, n.UUID)
				}
			}
			// An earlier rpctl stored the first node's provider as its row
			// spelled it; its vcpus have changed since.
			legacy := nodes[0]
			if _, err := c.placement.ExecContext(ctx, c.placement.Rebind(`UPDATE resource_providers SET uuid = ? WHERE uuid = ?`), strings.ToUpper(legacy.UUID), legacy.UUID); err != nil {
				t.Fatal(err)
			}
			if _, err := c.cell.ExecContext(ctx, c.cell.Rebind(`UPDATE compute_nodes SET vcpus = 77 WHERE hypervisor_hostname = ?`), legacy.Name); err != nil {
				t.Fatal(err)
			}
			if n := c.migrateAll(t, nil); n == 0 {
				t.Error("the changed vcpus were not migrated")
			}
			if got := stored(legacy.Name); len(got) != 1 || got[0] != strings.ToUpper(legacy.UUID) {
				t.Errorf("%s: providers %q, want the one stored before, updated in place", legacy.Name, got)
			}
			var total int64
			if err := c.placement.GetContext(ctx, &total, c.placement.Rebind(`SELECT i.total FROM inventories i
				JOIN resource_providers rp ON rp.id = i.resource_provider_id
				JOIN resource_classes rc ON rc.id = i.resource_class_id
				WHERE rp.name = ? AND rc.name = 'VCPU'`), legacy.Name); err != nil || total != 77 {
				t.Errorf("%s VCPU total %d (%v), want 77", legacy.Name, total, err)
			}
			if n := c.migrateAll(t, nil); n != 0 {
				t.Errorf("a re-run wrote %d rows", n)
			}
			c.checkAllocations(t)
			if out, errOut, code := cmdtest.Rpctl(t, append(append([]string{}, c.args...), "status", "--check", "rpctl", "--check", "placement-status")...); code != 0 {
				t.Errorf("status: exit %d:\n%s%s", code, out, errOut)
			}
		})
	}
}

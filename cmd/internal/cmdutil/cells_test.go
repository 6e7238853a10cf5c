package cmdutil_test

import (
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// TestCellsByNameOrUUID (issue 21): with the cells named by --cell-db URLs
// (so rpctl calls each by its database name), a cell mapping's name or
// uuid still finds its cell: claims heal --instance follows the
// instance's mapping, and --cell takes the mapping's name or uuid.
func TestCellsByNameOrUUID(t *testing.T) {
	cell, api, place := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	args := []string{"--cell-db", cell.URL, "--api-db", api.URL, "--placement-db", place.URL}
	// issue 21: no init first: sample-cloud creates every schema it is
	// given, Placement's included (migrate inventory then finds its tables).
	for _, line := range [][]string{{"sample-cloud", "--nodes", "3", "--cells", "1"}, {"migrate", "inventory"}} {
		if _, errOut, code := cmdtest.Rpctl(t, append(args, line...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", line, code, errOut)
		}
	}
	apiDB := cmdtest.OpenDB(t, api, storage.RoleAPI)
	var mapping struct{ UUID, Name string }
	if err := apiDB.Get(&mapping, "SELECT uuid, name FROM cell_mappings WHERE name <> 'cell0' LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	if mapping.Name == cell.Name {
		t.Fatalf("the mapping is named %q like the database: the test proves nothing", mapping.Name)
	}
	var instance string
	if err := apiDB.Get(&instance, "SELECT instance_uuid FROM instance_mappings WHERE cell_id IS NOT NULL LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"--instance", []string{"claims", "heal", "--instance", instance, "--dry-run"}},
		{"--cell by mapping name", []string{"claims", "heal", "--cell", mapping.Name, "--dry-run"}},
		{"--cell by mapping uuid", []string{"claims", "heal", "--cell", mapping.UUID, "--dry-run"}},
		{"--cell by database name", []string{"claims", "heal", "--cell", cell.Name, "--dry-run"}},
	} {
		out, errOut, code := cmdtest.Rpctl(t, append(args, tc.args...)...)
		if code == 255 || code == 127 || strings.Contains(errOut, "not among the cells") || strings.Contains(errOut, "was not found") {
			t.Errorf("%s: exit %d: %s%s", tc.name, code, out, errOut)
		}
	}
	if out, errOut, code := cmdtest.Rpctl(t, append(args, "compute-node", "list", "--cell", mapping.Name, "-f", "value", "-c", "host")...); code != 0 || out == "" {
		t.Errorf("compute-node list --cell %s: exit %d: %s%s", mapping.Name, code, out, errOut)
	}
	if _, errOut, code := cmdtest.Rpctl(t, append(args, "claims", "heal", "--cell", "nope")...); code != 127 || !strings.Contains(errOut, "nope") {
		t.Errorf("--cell nope: exit %d: %s", code, errOut)
	}
}

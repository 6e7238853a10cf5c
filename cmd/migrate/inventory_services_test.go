package migrate_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
)

// TestMigrateInventoryRefusesOldControlServices: an old nova-conductor
// stops `migrate inventory` (exit 2, named, nothing written) unless --force.
func TestMigrateInventoryRefusesOldControlServices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cloud.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", path, "sample-cloud", "--nodes", "6", "--seed", "3"); code != 0 {
		t.Fatalf("sample-cloud: %s", errOut)
	}
	db, err := storage.Open(context.Background(), dsn.SQLiteFile(path), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE services SET version = 30 WHERE `binary` = 'nova-osapi_compute'"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"migrate", "inventory"}, {"migrate", "all"}} {
		_, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", path}, args...)...)
		if code != 2 || !strings.Contains(errOut, "nova-osapi_compute on") || !strings.Contains(errOut, "(version 30)") || !strings.Contains(errOut, "--force") {
			t.Errorf("%v: exit %d, want 2 naming the old service:\n%s", args, code, errOut)
		}
	}
	var n int
	if err := db.GetContext(context.Background(), &n, "SELECT COUNT(*) FROM resource_providers"); err != nil || n != 0 {
		t.Errorf("refused migration wrote %d providers (%v)", n, err)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", path, "migrate", "inventory", "--force"); code != 0 || !strings.Contains(errOut, "--force") {
		t.Errorf("--force: exit %d\n%s", code, errOut)
	}
}

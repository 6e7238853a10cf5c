package migrate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestComputeIDsOnAnOlderSchema: populate_instance_compute_id told a
// release that has it (2023.2 on) on a cell whose schema predates the
// column says so, naming the release that added it and what to run,
// instead of the driver's "no such column".
func TestComputeIDsOnAnOlderSchema(t *testing.T) {
	db := filepath.Join(t.TempDir(), "zed.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--nodes", "3"); code != 0 {
		t.Fatalf("sample-cloud: %s", errOut)
	}
	_, errOut, code := cmdtest.Rpctl(t, "--db", db, "migrate", "compute-ids", "--release", "2024.1")
	if code != 2 || !strings.Contains(errOut, "instances has no compute_id column") || !strings.Contains(errOut, "Nova 28 (2023.2)") || strings.Contains(errOut, "no such column") {
		t.Errorf("migrate compute-ids --release 2024.1 on Zed's schema: exit %d\n%s", code, errOut)
	}
}

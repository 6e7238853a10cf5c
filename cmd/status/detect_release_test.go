package status_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestDetectReleaseDBSync: rpctl status --release auto reads the release
// from the cell database's alembic head, on schemas made by Nova 26.2.2's
// db sync (the host's) and by Nova 31.0.0's (the 2025.1 chroot), and
// refuses a schema no db sync stamped (rpctl init's).
func TestDetectReleaseDBSync(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	testdb.RequirePython(t, "nova.cmd.manage", "pymysql")
	zedCell, zedAPI, zedPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	prefix := zedCell.URL[:strings.LastIndex(zedCell.URL, "/")]
	if out, err := exec.Command(filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh"), prefix, zedCell.Name, zedAPI.Name, zedPl.Name).CombinedOutput(); err != nil {
		t.Fatalf("reference db sync: %v\n%s", err, out)
	}
	cell2025 := testdb.NewMySQL(t)
	chroot.DBSync(t, cell2025, testdb.NewMySQL(t), nil)
	bare := testdb.NewMySQL(t)
	if _, errOut, code := cmdtest.Rpctl(t, "--cell-db", bare.URL, "init"); code != 0 {
		t.Fatalf("rpctl init: %d %s", code, errOut)
	}
	for _, tc := range []struct {
		cell   *testdb.MySQL
		code   int
		stderr string
	}{
		{cell: zedCell, stderr: "release zed, detected: cell " + zedCell.Name + " at ccb0fa1a2252 (zed)"},
		{cell: cell2025, stderr: "release 2025.1, detected: cell " + cell2025.Name + " at 2903cd72dc14 (2025.1)"},
		{cell: bare, code: 255, stderr: "--release auto: cell " + bare.Name + ": no alembic_version"},
	} {
		_, errOut, code := cmdtest.Rpctl(t, "--cell-db", tc.cell.URL, "status", "--release", "auto", "--check", "Service User Token Configuration")
		if !strings.Contains(errOut, tc.stderr) || (tc.code != 0 && code != tc.code) {
			t.Errorf("cell %s: exit %d, stderr %q; want it to contain %q", tc.cell.Name, code, errOut, tc.stderr)
		}
	}
}

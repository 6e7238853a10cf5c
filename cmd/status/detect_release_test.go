package status_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestDetectReleaseDBSync: rpctl status --release auto reads the release
// from the cell database's alembic head, on schemas made by Nova 26.2.2's
// db sync (the host's) and by Nova 31.0.0's (the 2025.1 chroot), and from
// the control services' versions: they choose nothing against the head
// (an upgrade writes the schema first), and stand alone on a schema no
// db sync stamped (rpctl init's), which without them is refused.
// --nova-release and [rpctl] nova_release name the release instead.
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
	services := func(m *testdb.MySQL, binary string, version int) {
		t.Helper()
		if _, err := m.Admin.Exec("INSERT INTO `"+m.Name+"`.services (host, `binary`, topic, report_count, disabled, deleted, forced_down, version) VALUES (?, ?, ?, 1, 0, 0, 0, ?)", fmt.Sprintf("ctl-%d", version), binary, strings.TrimPrefix(binary, "nova-"), version); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(t.TempDir(), "rpctl.conf")
	if err := os.WriteFile(conf, []byte("[rpctl]\nnova_release = 2023.2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := []string{"status", "--release", "auto", "--check", "Service User Token Configuration"}
	for _, tc := range []struct {
		name   string
		pre    func()
		args   []string
		code   int
		stderr string
	}{
		{name: "zed head", args: []string{"--cell-db", zedCell.URL}, stderr: "release zed, detected from the alembic head: cell " + zedCell.Name + " at ccb0fa1a2252 (zed), no control service with a version"},
		{name: "2025.1 head", args: []string{"--cell-db", cell2025.URL}, stderr: "release 2025.1, detected from the alembic head: cell " + cell2025.Name + " at 2903cd72dc14 (2025.1)"},
		{name: "no witness", args: []string{"--cell-db", bare.URL}, code: 255, stderr: "--release auto: cell " + bare.Name + " without alembic_version, no control service with a version: neither witness names a release rpctl knows"},
		{name: "zed head and a Zed conductor", pre: func() { services(zedCell, "nova-conductor", 64) }, args: []string{"--cell-db", zedCell.URL},
			stderr: "release zed, detected from the alembic head and service versions: cell " + zedCell.Name + " at ccb0fa1a2252 (zed), control services up to version 64 (nova-conductor in cell " + zedCell.Name + ", zed)"},
		{name: "mid-upgrade: 2025.1 schema, 2024.2 scheduler", pre: func() { services(cell2025, "nova-scheduler", 67) }, args: []string{"--cell-db", cell2025.URL},
			stderr: "release 2025.1, detected from the alembic head: cell " + cell2025.Name + " at 2903cd72dc14 (2025.1), control services up to version 67 (nova-scheduler in cell " + cell2025.Name + ", 2024.2); the schema's release wins"},
		{name: "services alone", pre: func() { services(bare, "nova-conductor", 67) }, args: []string{"--cell-db", bare.URL},
			stderr: "release 2024.2, detected from the service versions: cell " + bare.Name + " without alembic_version, control services up to version 67"},
		{name: "services newer than rpctl knows", pre: func() { services(bare, "nova-conductor", 70) }, args: []string{"--cell-db", bare.URL}, code: 255,
			stderr: "reports service version 70, newer than the newest release rpctl knows (2025.1: 68)"},
		{name: "--nova-release", args: []string{"--cell-db", bare.URL, "--nova-release", "2024.2"}, stderr: "release 2024.2, named by the operator (named by --nova-release; not detected)"},
		{name: "[rpctl] nova_release", args: []string{"--cell-db", bare.URL, "--config-file", conf}, stderr: "release 2023.2, named by the operator (named by " + conf + ":2 [rpctl] nova_release; not detected)"},
		{name: "--nova-release unknown", args: []string{"--cell-db", zedCell.URL, "--nova-release", "2025.2"}, code: 255, stderr: `--nova-release: rpctl knows the rules of zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1, not "2025.2"`},
	} {
		if tc.pre != nil {
			tc.pre()
		}
		_, errOut, code := cmdtest.Rpctl(t, append(tc.args, check...)...)
		if !strings.Contains(errOut, tc.stderr) || (tc.code != 0 && code != tc.code) {
			t.Errorf("%s: exit %d, stderr %q; want it to contain %q", tc.name, code, errOut, tc.stderr)
		}
	}
}

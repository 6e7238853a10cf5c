package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestDefaultConfigFiles: with no --config-file and no database flag the
// default files that exist are read, then --config-dir's *.conf in name
// order; --verbose names them; a database flag turns the defaults off.
func TestDefaultConfigFiles(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cloud.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "init"); code != 0 {
		t.Fatal(errOut)
	}
	novaConf := filepath.Join(dir, "nova.conf")
	os.WriteFile(novaConf, []byte("[DEFAULT]\nstate_path = "+dir+"\n[database]\nconnection = sqlite:///$state_path/none.db\n"), 0o644)
	confDir := filepath.Join(dir, "nova.conf.d")
	os.Mkdir(confDir, 0o755)
	os.WriteFile(filepath.Join(confDir, "50-db.conf"), []byte("[database]\nconnection = sqlite:///${state_path}/cloud.db\n"), 0o644)
	t.Setenv("RPCTL_DEFAULT_CONFIG_FILES", novaConf+":"+filepath.Join(dir, "placement.conf"))

	out, errOut, code := cmdtest.Rpctl(t, "--verbose", "--config-dir", confDir, "compute-node", "list", "--print-empty")
	if code != 0 || !strings.Contains(out, "hypervisor_hostname") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if want := "config: read " + novaConf + ", " + filepath.Join(confDir, "50-db.conf") + "\n"; !strings.Contains(errOut, want) {
		t.Errorf("--verbose: %q lacks %q", errOut, want)
	}
	// Without the directory, nova.conf's database does not exist.
	if _, errOut, code := cmdtest.Rpctl(t, "compute-node", "list"); code != 255 || !strings.Contains(errOut, "none.db") {
		t.Errorf("default file alone: exit %d %s", code, errOut)
	}
	// A database flag: no default file is read.
	if _, errOut, code := cmdtest.Rpctl(t, "--verbose", "--db", db, "compute-node", "list"); code != 0 || !strings.Contains(errOut, "config: no config file read") {
		t.Errorf("--db: exit %d %s", code, errOut)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--config-dir", filepath.Join(dir, "nope"), "compute-node", "list"); code != 255 || !strings.Contains(errOut, "not a directory") {
		t.Errorf("missing --config-dir: exit %d %s", code, errOut)
	}
}

// TestMissingDatabaseFile: only init and sample-cloud create a --db file;
// every other command says it does not exist (255) and creates nothing.
func TestMissingDatabaseFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	for _, args := range [][]string{
		{"--db", missing, "compute-node", "list"},
		{"--db", missing, "status"},
		{"--db", missing, "migrate", "all"},
		{"--db", missing, "candidates", "--resources", "VCPU:1"},
		{"--cell-db", "sqlite:///" + missing, "migrate", "ratios"},
	} {
		_, errOut, code := cmdtest.Rpctl(t, args...)
		if code != 255 || !strings.Contains(errOut, missing+" does not exist") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("%q created %s", args, missing)
		}
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", missing, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	other := filepath.Join(dir, "other.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", other, "sample-cloud", "--nodes", "2"); code != 0 {
		t.Fatalf("sample-cloud: %d %s", code, errOut)
	}
}

// TestSampleCloudEmbeddedOneCell: the embedded file is one cell database, so
// --cells 2 there is refused before anything is written.
func TestSampleCloudEmbeddedOneCell(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cloud.db")
	_, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--cells", "2")
	if code != 255 || !strings.Contains(errOut, "--cells 2: the embedded file (--db) holds one cell") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the file was created")
	}
}

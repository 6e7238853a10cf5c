package cmd_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestReadOnlySQLite (issue 37 row 14): an embedded database file this
// process may not write — the file 0444 in a 0555 directory, read by
// another user — is still read by the commands that only read (status,
// provider list, candidates), which used to fail opening it ("attempt to
// write a readonly database": WAL mode is set when a file is opened); a
// write fails naming the database, and the file is unchanged.
func TestReadOnlySQLite(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cloud", "rpctl.db")
	if err := os.Mkdir(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--nodes", "5", "--seed", "1")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "migrate", "all"); code != 0 {
		t.Fatalf("migrate all: exit %d: %s", code, errOut)
	}
	bin := testdb.BuildRpctl(t)
	for _, p := range []string{db, filepath.Dir(db)} {
		mode := os.FileMode(0o444)
		if p != db {
			mode = 0o555
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(filepath.Dir(db), 0o755) })
	// Root may write anything: run as nobody, who may read and execute the
	// files on the way.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		// Only the directories t.TempDir made (0700): the test's own root
		// and the two below it; the ones above are the machine's.
		for _, p := range []string{filepath.Dir(filepath.Dir(bin)), filepath.Dir(bin), dir} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		c := exec.Command(bin, append([]string{"--db", db}, args...)...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		c.Run()
		return out.String(), c.ProcessState.ExitCode()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--check", "resource-providers"}, "Success"},
		{[]string{"provider", "list"}, "cmp1-00001.example.org"},
		{[]string{"candidates", "--resources", "VCPU:1"}, "allocation candidates on"},
	} {
		out, code := run(tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v on a read-only file: exit %d, want 0 and %q:\n%s", tc.args, code, tc.want, out)
		}
	}
	out, code := run("inventory", "set", "cmp1-00001.example.org", "VCPU:reserved=1", "--amend")
	if code == 0 || !strings.Contains(out, "readonly database") || !strings.Contains(out, db) {
		t.Errorf("a write on a read-only file: exit %d, want a failure naming the database:\n%s", code, out)
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the read-only file changed")
	}
}

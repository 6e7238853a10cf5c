package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestDebugLogsSQL: --debug logs every statement's shape and timing, with
// no password, and the error stays one line; --log-file takes the records
// instead; -q leaves standard error to errors.
func TestDebugLogsSQL(t *testing.T) {
	my := testdb.NewMySQL(t)
	if _, errOut, code := cmdtest.Rpctl(t, "--cell-db", my.URL, "init"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := cmdtest.Rpctl(t, "--debug", "--cell-db", my.URL, "compute-node", "list")
	if code != 0 || out != "\n" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"level=DEBUG msg=sql", "FROM compute_nodes", "elapsed=", "msg=\"sql connect\""} {
		if !strings.Contains(errOut, want) {
			t.Errorf("--debug stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "rpctl-test-pw") {
		t.Errorf("--debug prints the password:\n%s", errOut)
	}

	log := filepath.Join(t.TempDir(), "rpctl.log")
	_, errOut, code = cmdtest.Rpctl(t, "--log-file", log, "--debug", "--cell-db", my.URL, "compute-node", "list", "--cell", "nope")
	if code != 255 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, `no cell named "nope"`) {
		t.Errorf("with --log-file: exit %d, stderr %q", code, errOut)
	}
	b, err := os.ReadFile(log)
	if err != nil || !strings.Contains(string(b), `msg="sql connect"`) || !strings.Contains(string(b), "level=ERROR") || strings.Contains(string(b), "rpctl-test-pw") {
		t.Errorf("log file (%v):\n%s", err, b)
	}

	_, errOut, code = cmdtest.Rpctl(t, "-q", "--cell-db", my.URL, "migrate", "ratios")
	if code != 0 || errOut != "" {
		t.Errorf("-q: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = cmdtest.Rpctl(t, "-q", "--cell-db", my.URL, "migrate", "ratios", "--max-count", "0")
	if code != 127 {
		t.Errorf("-q --max-count 0: exit %d, stderr %q", code, errOut)
	}
}

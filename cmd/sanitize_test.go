package cmd_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestEchoedInputIsEscaped: control characters from a query reach the
// error line as \x1b, \x07, \x0d, not raw (terminal escape injection).
func TestEchoedInputIsEscaped(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cloud.db")
	if _, e, code := cmdtest.Rpctl(t, "--db", db, "init"); code != 0 {
		t.Fatal(e)
	}
	for _, q := range []string{"resources=VCPU:1&required=%1b[31mEVIL%07", "resources=VCPU:1&member_of=%0dnot-a-uuid", "resources%1b[2J=VCPU:1"} {
		_, stderr, code := cmdtest.Rpctl(t, "--db", db, "candidates", "--query", q)
		if code != 2 || strings.ContainsAny(stderr, "\x1b\x07\r") || !strings.Contains(stderr, `\x`) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with the control characters escaped", q, code, stderr)
		}
	}
}

// TestGoDSNWithAtInPassword: go-sql-driver's DSN form whose password holds
// '@' and ':' is recognised as go-sql-driver's ParseDSN reads it (the last
// '@' ends the credentials): the error is about connecting, not an
// unknown scheme, and never shows the password.
func TestGoDSNWithAtInPassword(t *testing.T) {
	_, stderr, code := cmdtest.Rpctl(t, "--placement-db", "u:a@b:c@tcp(127.0.0.1:1)/db", "candidates", "--resources", "VCPU:1")
	if code == 0 || strings.Contains(stderr, "unknown database URL scheme") || !strings.Contains(stderr, "cannot connect") ||
		strings.Contains(stderr, "a@b:c") || !strings.Contains(stderr, "u:***@tcp(127.0.0.1:1)/db") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

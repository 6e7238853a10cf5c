package cmd_test

import (
	"regexp"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestVersion: rpctl --version names the release, commit, build date and the
// schema releases (read from the embedded schema dumps).
func TestVersion(t *testing.T) {
	out, _, code := cmdtest.Rpctl(t, "--version")
	if code != 0 || !regexp.MustCompile(`^test \(commit \S+, built \S+\)\nschemas: Nova 26\.2\.2, Placement 8\.0\.0\n$`).MatchString(out) {
		t.Errorf("exit %d: %q", code, out)
	}
}

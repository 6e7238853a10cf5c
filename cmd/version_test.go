package cmd_test

import (
	"regexp"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestVersion: rpctl --version names the release, commit, build date and the
// schema releases (read from the embedded schema dumps), and the OpenStack
// releases whose rules it speaks, proven or read (issue 33).
func TestVersion(t *testing.T) {
	out, _, code := cmdtest.Rpctl(t, "--version")
	if code != 0 || !regexp.MustCompile(`^test \(commit \S+, built \S+\)\nschemas: Nova 26\.2\.2, Placement 8\.0\.0\nreleases: zed, 2025\.1 \(proven against their own Nova and Placement\); 2023\.1, 2023\.2, 2024\.1, 2024\.2 \(rules read from their source\)\n$`).MatchString(out) {
		t.Errorf("exit %d: %q", code, out)
	}
}

package cmd_test

import (
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/placementtest"
)

// TestPlacementForbidden (issue 21): a 403 from the real placement-api
// (noauth2 gives any token but "admin" no role) is refused input, exit 2
// as the help says, with one line saying what to check, not 255.
func TestPlacementForbidden(t *testing.T) {
	p := placementtest.New(t)
	for _, args := range [][]string{
		{"provider", "list"},
		{"provider", "create", "cn9"},
		{"resource-class", "list"},
		// The allocation commands share the store commands' codes.
		{"allocation", "show", "a0000000-0000-4000-8000-000000000001"},
	} {
		_, errOut, code := cmdtest.Rpctl(t, append([]string{"--os-endpoint", p.Base, "--os-token", "not-admin"}, args...)...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "403 Forbidden") || !strings.Contains(errOut, "role") {
			t.Errorf("%v as a user without a role: exit %d, stderr %q; want 2 and one line about the role", args, code, errOut)
		}
	}
}

package claims_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestClaimsPlacementForbidden (issue 21): every claims command through the
// real placement-api, with a token noauth2 gives no role (403 on every
// call), ends with the claims commands' documented invalid-input code and
// one line naming the refused request, not 255 with a stack of wrapping.
func TestClaimsPlacementForbidden(t *testing.T) {
	t.Parallel()
	c, consumers := seedAuditCopy(t, false, nil)
	snap := filepath.Join(t.TempDir(), "claims.db")
	if out, errOut, code := cmdtest.Rpctl(t, c.rpctlArgs("claims", "snapshot", "--out", snap)...); code != 0 {
		t.Fatalf("snapshot: exit %d: %s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"claims", "list"},
		{"claims", "audit"},
		{"claims", "audit", "--delete"},
		{"claims", "audit", "--provider", cn1UUID},
		{"claims", "heal"},
		{"claims", "heal", "--dry-run"},
		{"claims", "create", "--consumer", cu(990), "--project", "p1", "--user", "u1", "--resources", "VCPU:1"},
		{"claims", "create", "--consumer", cu(990), "--project", "p1", "--user", "u1", "--resources", "VCPU:1", "--host", "host1"},
		{"claims", "release", consumers[0]},
		{"claims", "snapshot", "--out", filepath.Join(t.TempDir(), "new.db")},
		{"claims", "diff", snap},
	} {
		for _, token := range []string{"not-admin"} {
			full := append([]string{"--cell-db", c.Cell.URL, "--api-db", c.API.URL, "--os-endpoint", c.URL, "--os-token", token}, args...)
			out, errOut, code := cmdtest.Rpctl(t, full...)
			if code != 127 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "403 Forbidden to ") || !strings.Contains(errOut, "role") {
				t.Errorf("%v with a token without a role: exit %d, stdout %q, stderr %q; want 127 and one line naming the refused request", args, code, out, errOut)
			}
		}
	}
}

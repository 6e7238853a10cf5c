package claims_test

import (
	"strings"
	"testing"

	claimscmd "github.com/rpctl/rpctl/cmd/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// TestClaimsHealFlags: what claims heal's flags put in ClaimsHealOptions,
// through the runF hook (nothing runs). --max-count's default is "" (all,
// in batches), not the flag's zero text.
func TestClaimsHealFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want claimscmd.ClaimsHealOptions
	}{
		{"defaults", nil, claimscmd.ClaimsHealOptions{}},
		{"max-count kept as given", []string{"--max-count", "abc"}, claimscmd.ClaimsHealOptions{MaxCount: "abc"}},
		{"one instance", []string{"--instance", "6f4b1c1e-0000-4000-8000-000000000001", "--force", "--dry-run"},
			claimscmd.ClaimsHealOptions{Instance: "6f4b1c1e-0000-4000-8000-000000000001", Force: true, DryRun: true}},
		{"one cell", []string{"--cell", "cell1", "--max-count", "5"}, claimscmd.ClaimsHealOptions{Cell: "cell1", MaxCount: "5"}},
		// nova-manage's flag: rpctl never heals port allocations, so it is
		// taken and changes nothing (TestClaimsHealParityWithNova gives
		// both tools the same command line).
		{"nova-manage's --skip-port-allocations", []string{"--skip-port-allocations", "--dry-run"}, claimscmd.ClaimsHealOptions{SkipPortAllocations: true, DryRun: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *claimscmd.ClaimsHealOptions
			c := claimscmd.NewCmdClaimsHeal(cmdutil.NewFactory(ios), func(o *claimscmd.ClaimsHealOptions) error { got = o; return nil })
			c.SetArgs(tt.args)
			if err := c.Execute(); err != nil {
				t.Fatal(err)
			}
			if got == nil || *got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestClaimsAuditFlags: what claims audit's flags put in
// ClaimsAuditOptions; --resource_provider is nova-manage placement audit's
// spelling of --provider.
func TestClaimsAuditFlags(t *testing.T) {
	const rp = "6f4b1c1e-0000-4000-8000-000000000002"
	tests := []struct {
		name    string
		args    []string
		want    claimscmd.ClaimsAuditOptions
		wantErr string
	}{
		{"defaults", nil, claimscmd.ClaimsAuditOptions{}, ""},
		{"--provider", []string{"--provider", rp}, claimscmd.ClaimsAuditOptions{Provider: rp}, ""},
		{"nova-manage's --resource_provider", []string{"--resource_provider", rp, "--delete"}, claimscmd.ClaimsAuditOptions{Provider: rp, Delete: true}, ""},
		{"both spellings", []string{"--provider", rp, "--resource_provider", rp}, claimscmd.ClaimsAuditOptions{}, "none of the others can be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *claimscmd.ClaimsAuditOptions
			c := claimscmd.NewCmdClaimsAudit(cmdutil.NewFactory(ios), func(o *claimscmd.ClaimsAuditOptions) error { got = o; return nil })
			c.SetArgs(tt.args)
			c.SilenceUsage, c.SilenceErrors = true, true
			err := c.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || *got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

package trait_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestTraitShow (issue 39): osc's trait show NAME on both backends: a
// trait Placement has is shown (its one field), any other name is
// Placement's 404 message, exit 2 (osc exits 1).
func TestTraitShow(t *testing.T) {
	cmdtest.OnBothBackends(t, func(t *testing.T, rpctl func(args ...string) (string, string, int)) {
		if _, errOut, code := rpctl("trait", "create", "CUSTOM_GOLD"); code != 0 {
			t.Fatalf("trait create: exit %d: %s", code, errOut)
		}
		for _, tt := range []struct {
			name      string
			args      []string
			code      int
			out, errs string
		}{
			{"custom", []string{"CUSTOM_GOLD", "-f", "value"}, 0, "CUSTOM_GOLD\n", ""},
			{"standard", []string{"HW_CPU_X86_AVX2", "-f", "json"}, 0, "{\n  \"name\": \"HW_CPU_X86_AVX2\"\n}\n", ""},
			{"table", []string{"CUSTOM_GOLD"}, 0, "+-------+-------------+\n| Field | Value       |\n+-------+-------------+\n| name  | CUSTOM_GOLD |\n+-------+-------------+\n", ""},
			{"unknown", []string{"CUSTOM_NOPE"}, 2, "", "No such trait(s): CUSTOM_NOPE."},
			// A prefix is no trait (GET /traits?name=in: matches whole names).
			{"prefix", []string{"CUSTOM_GOL"}, 2, "", "No such trait(s): CUSTOM_GOL."},
			{"not a trait name", []string{"CUSTOM_GOLD,HW_CPU_X86_AVX2"}, 2, "", "No such trait(s): CUSTOM_GOLD,HW_CPU_X86_AVX2."},
			{"lower case", []string{"custom_gold"}, 2, "", "No such trait(s): custom_gold."},
			{"no name", nil, 255, "", "accepts 1 arg(s)"},
		} {
			out, errOut, code := rpctl(append([]string{"trait", "show"}, tt.args...)...)
			if code != tt.code || out != tt.out || !strings.Contains(errOut, tt.errs) {
				t.Errorf("%s: trait show %v: exit %d, want %d\nstdout %q, want %q\nstderr %q, want it to hold %q", tt.name, tt.args, code, tt.code, out, tt.out, errOut, tt.errs)
			}
		}
	})
}

// TestTraitListAssociated (issue 39): osc's trait list --associated is a
// switch; rpctl's flag takes true|false. Both spellings work, on both
// backends, and a stray argument is still a usage error (255).
func TestTraitListAssociated(t *testing.T) {
	for _, be := range []struct {
		name  string
		flags func(p placementtest.Placement) []string
	}{
		{"database", func(p placementtest.Placement) []string { return []string{"--placement-db", p.URL} }},
		{"api", func(p placementtest.Placement) []string {
			return []string{"--os-endpoint", p.Base, "--os-token", "admin"}
		}},
	} {
		t.Run(be.name, func(t *testing.T) {
			testdb.RequirePython(t, "placement")
			flags := be.flags(placementtest.New(t))
			rpctl := func(args ...string) (string, string, int) {
				return cmdtest.Rpctl(t, append(slices.Clip(flags), args...)...)
			}
			for _, args := range [][]string{{"trait", "create", "CUSTOM_GOLD"}, {"trait", "create", "CUSTOM_LEAD"}, {"provider", "create", "cn1"}, {"provider", "trait", "set", "cn1", "CUSTOM_GOLD", "HW_CPU_X86_AVX2"}} {
				if _, errOut, code := rpctl(args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
			}
			const associated = "HW_CPU_X86_AVX2\nCUSTOM_GOLD\n"
			for _, tt := range []struct {
				args   []string
				code   int
				out    string // "": checked by lead below
				lead   bool   // the output holds CUSTOM_LEAD (no provider has it)
				errOut string
			}{
				{args: []string{"--associated"}, out: associated},
				{args: []string{"--associated", "true"}, out: associated},
				{args: []string{"--associated=true"}, out: associated},
				{args: []string{"--associated", "false"}, lead: true},
				{args: []string{"--associated=false"}, lead: true},
				{args: []string{"--associated", "x"}, code: 255, errOut: `unknown command "x" for "rpctl trait list"`},
				{args: []string{"x"}, code: 255, errOut: `unknown command "x" for "rpctl trait list"`},
				{args: []string{"--associated=false", "true"}, code: 255, errOut: `unknown command "true" for "rpctl trait list"`},
				{args: []string{"--associated=yes"}, code: 2, errOut: `--associated must be true or false, got "yes"`},
			} {
				out, errOut, code := rpctl(append([]string{"trait", "list", "-f", "value", "--name", "in:HW_CPU_X86_AVX2,CUSTOM_GOLD,CUSTOM_LEAD"}, tt.args...)...)
				if code != tt.code || !strings.Contains(errOut, tt.errOut) || (tt.out != "" && out != tt.out) || (tt.lead != (out == "CUSTOM_LEAD\n")) {
					t.Errorf("trait list %v: exit %d, want %d; stdout %q; stderr %q, want it to hold %q", tt.args, code, tt.code, out, errOut, tt.errOut)
				}
			}
		})
	}
}

package status

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func fixed(code Code, details string) func(context.Context) (Code, string, error) {
	return func(context.Context) (Code, string, error) { return code, details, nil }
}

func TestRunAndExit(t *testing.T) {
	boom := func(context.Context) (Code, string, error) { panic("index out of range") }
	broken := func(context.Context) (Code, string, error) { return Success, "", errors.New("bad state") }
	for _, tc := range []struct {
		name   string
		checks []Check
		exit   int
	}{
		{"all success", []Check{{Name: "a", Run: fixed(Success, "")}, {Name: "b", Run: fixed(Success, "")}}, 0},
		{"worst is warning", []Check{{Name: "a", Run: fixed(Success, "")}, {Name: "b", Run: fixed(Warning, "w")}}, 1},
		{"worst is failure", []Check{{Name: "a", Run: fixed(Failure, "f")}, {Name: "b", Run: fixed(Warning, "w")}}, 2},
		{"panic is 255 and the rest still run", []Check{{Name: "a", Run: boom}, {Name: "b", Run: fixed(Warning, "w")}}, 255},
		{"error is 255", []Check{{Name: "a", Run: fixed(Failure, "f")}, {Name: "b", Run: broken}}, 255},
		{"unknown code is a crash", []Check{{Name: "a", Run: fixed(Code(7), "")}}, 255},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Run(context.Background(), tc.checks)
			if len(rep.Results) != len(tc.checks) {
				t.Fatalf("%d results for %d checks", len(rep.Results), len(tc.checks))
			}
			if got := rep.Exit(); got != tc.exit {
				t.Errorf("exit %d, want %d (%+v)", got, tc.exit, rep.Results)
			}
			for i, r := range rep.Results {
				if r.Check != tc.checks[i].Name {
					t.Errorf("result %d is %q, want %q", i, r.Check, tc.checks[i].Name)
				}
				if r.Crashed && (r.Code != Failure || !strings.HasPrefix(r.Details, "Error: ")) {
					t.Errorf("crashed check reported as %+v", r)
				}
			}
		})
	}
}

func TestSelect(t *testing.T) {
	checks := Checks(&Env{})
	for _, tc := range []struct {
		names []string
		want  []string
		err   string
	}{
		{nil, nil, ""},
		{[]string{"compute-node-uuids"}, []string{CheckComputeNodeUUIDs}, ""},
		{[]string{"service versions", "Allocation Ratios"}, []string{CheckAllocationRatios, CheckServiceVersions}, ""},
		{[]string{"OVER-COMMITTED PROVIDERS"}, []string{CheckOverCommitted}, ""},
		{[]string{"nope"}, nil, `--check "nope": no such check (checks: "Cells v2", "Placement API", "Cinder API", "Policy File JSON to YAML Migration", "Older than N-1 computes"`},
	} {
		got, err := Select(checks, tc.names)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("Select(%q) error %v, want %q", tc.names, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if tc.names == nil {
			if len(got) != len(checks) {
				t.Errorf("no names gave %d checks", len(got))
			}
			continue
		}
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
		}
		if strings.Join(names, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Select(%q) = %q, want %q", tc.names, names, tc.want)
		}
	}
}

// TestUnreadableCellsOneLine: several unreadable cells make one line of
// details, as oslo.upgradecheck's --json consumers expect.
func TestUnreadableCellsOneLine(t *testing.T) {
	e := &Env{CellErrs: []error{errors.New("cell a: dead"), errors.New("cell b: dead")}, PlacementErr: errors.New("no Placement")}
	// nova-status' checks of nova.conf alone read no database (and keep
	// Nova's texts, newlines and all).
	configOnly := map[string]bool{CheckPlacementAPI: true, CheckCinderAPI: true, CheckPolicyJSON: true, CheckServiceUserToken: true}
	for _, c := range Run(context.Background(), Checks(e)).Results {
		if configOnly[c.Check] {
			continue
		}
		if c.Code != Failure || strings.Contains(c.Details, "\n") {
			t.Errorf("%s: %s %q", c.Check, c.Code, c.Details)
		}
	}
}

// Package archtest holds the architecture test: the layering that lets a
// domain run on either backend and keeps SQL out of the domains.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rpctl/rpctl"

// domains are the packages that hold rpctl's rules of Nova and Placement.
// They declare the stores they need; storage/ and placementclient/
// implement them.
var domains = []string{"migrate", "status", "inventory", "candidates", "claims", "capacity", "flavors", "providerconfig", "samplecloud", "metrics"}

// drivers are what only storage/ may reach: database drivers and the SQL
// helpers built on them.
var drivers = []string{"github.com/go-sql-driver/mysql", "modernc.org/sqlite", "github.com/jmoiron/sqlx"}

// goList runs `go list` in the module root (two levels up).
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// deps is every package pkg's non-test code pulls in, itself excluded.
func deps(t *testing.T, pkg string) []string {
	var out []string
	for _, d := range goList(t, "-deps", pkg) {
		if d != pkg {
			out = append(out, d)
		}
	}
	return out
}

func isUnder(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func TestLayering(t *testing.T) {
	all := goList(t, "./...")
	if len(all) < 20 {
		t.Fatalf("go list ./... found only %d packages: %v", len(all), all)
	}
	domainPkgs := map[string]bool{}
	for _, d := range domains {
		domainPkgs[module+"/"+d] = true
	}
	for _, tc := range []struct {
		name     string
		subjects func(p string) bool
		banned   func(dep string) bool
	}{
		{"domain packages import no database driver and no storage package",
			func(p string) bool {
				for _, d := range domains {
					if isUnder(p, module+"/"+d) {
						return true
					}
				}
				return false
			},
			func(dep string) bool {
				for _, d := range drivers {
					if isUnder(dep, d) {
						return true
					}
				}
				return isUnder(dep, module+"/storage") || isUnder(dep, "github.com/spf13/cobra")
			}},
		{"storage packages import no cmd",
			func(p string) bool { return isUnder(p, module+"/storage") },
			func(dep string) bool { return isUnder(dep, module+"/cmd") || isUnder(dep, "github.com/spf13/cobra") }},
		{"internal/ helpers import no domain",
			func(p string) bool { return isUnder(p, module+"/internal") },
			func(dep string) bool {
				for d := range domainPkgs {
					if isUnder(dep, d) {
						return true
					}
				}
				return isUnder(dep, module+"/cmd") || isUnder(dep, module+"/placementclient")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checked := 0
			for _, p := range all {
				if !tc.subjects(p) {
					continue
				}
				checked++
				for _, d := range deps(t, p) {
					if tc.banned(d) {
						t.Errorf("%s imports %s", strings.TrimPrefix(p, module+"/"), d)
					}
				}
			}
			if checked == 0 {
				t.Fatal("no package checked: the layout this test knows has moved")
			}
		})
	}
}

// TestRootHoldsCmdAndDomains: the root holds cmd/, the domains and the two
// backends' packages; helpers live under internal/.
func TestRootHoldsCmdAndDomains(t *testing.T) {
	allowed := map[string]bool{"cmd": true, "internal": true, "storage": true, "placementclient": true}
	for _, d := range domains {
		allowed[d] = true
	}
	for _, p := range goList(t, "./...") {
		top := strings.SplitN(strings.TrimPrefix(p, module+"/"), "/", 2)[0]
		if !allowed[top] {
			t.Errorf("%s is at the root: helpers go under internal/, domains are listed in this test", top)
		}
	}
}

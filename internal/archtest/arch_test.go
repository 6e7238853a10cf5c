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

// cmdRole says what a package under cmd/ is, for TestCommandPackages: the
// root ("root": it assembles the tree, and may import every command
// package), the helper programs' mains and the docs generator ("main": they
// wire the root), the plumbing every command shares ("shared": under
// cmd/internal), the test support ("test": cmd/internal/cmdtest, which runs
// the whole tree and is for tests only) or a command package ("command":
// one command group, or one big verb below its group).
func cmdRole(p string) string {
	rel := strings.TrimPrefix(p, module+"/")
	switch {
	case rel == "cmd":
		return "root"
	case rel == "cmd/internal/cmdtest":
		return "test"
	case rel == "cmd/internal/gendocs", strings.HasPrefix(rel, "cmd/rpctl"):
		return "main"
	case isUnder(rel, "cmd/internal"):
		return "shared"
	}
	return "command"
}

// cmdImportViolation says why package p may not import dep (both under
// the module), or "" when it may. Command packages import the shared
// plumbing and their own sub-packages, never a sibling or the root: what
// two command groups share moves down into cmd/internal. The plumbing
// imports no command package. Nothing but tests imports cmd/internal/cmdtest.
func cmdImportViolation(p, dep string) string {
	if !isUnder(dep, module+"/cmd") || cmdRole(p) == "root" || cmdRole(p) == "main" || cmdRole(p) == "test" {
		if cmdRole(dep) == "test" && cmdRole(p) != "test" {
			return "cmd/internal/cmdtest is for tests only"
		}
		return ""
	}
	switch cmdRole(dep) {
	case "root", "main":
		return "only the root and the mains wire the whole tree"
	case "test":
		return "cmd/internal/cmdtest is for tests only"
	case "shared":
		return ""
	}
	if cmdRole(p) == "shared" {
		return "the shared plumbing under cmd/internal imports no command package"
	}
	if isUnder(dep, p) {
		return "" // a big verb's own package, below its group
	}
	return "a command package imports no sibling: move what both need down into cmd/internal"
}

func TestCmdImportViolation(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	tests := []struct {
		p, dep string
		ok     bool
	}{
		{m("cmd/migrate"), m("cmd/internal/cmdutil"), true},
		{m("cmd/inventory"), m("cmd/inventory/set"), true},
		{m("cmd/inventory/set"), m("cmd/internal/shared"), true},
		{m("cmd"), m("cmd/claims"), true},
		{m("cmd/rpctl"), m("cmd"), true},
		{m("cmd/migrate"), m("migrate"), true},
		{m("cmd/exporter"), m("cmd/capacity"), false},
		{m("cmd/inventory/set"), m("cmd/inventory"), false},
		{m("cmd/inventory"), m("cmd/provider"), false},
		{m("cmd/claims"), m("cmd"), false},
		{m("cmd/internal/shared"), m("cmd/status"), false},
		{m("cmd/internal/cmdutil"), m("cmd"), false},
		{m("cmd/migrate"), m("cmd/internal/cmdtest"), false},
		{m("cmd"), m("cmd/internal/cmdtest"), false},
	}
	for _, tt := range tests {
		if got := cmdImportViolation(tt.p, tt.dep); (got == "") != tt.ok {
			t.Errorf("%s imports %s: violation %q, want ok=%v", tt.p, tt.dep, got, tt.ok)
		}
	}
}

// TestCommandPackages: cmd/ is laid out as the GitHub CLI's pkg/cmd, one
// package per command group, shared plumbing under cmd/internal (see
// cmdImportViolation for the rule and docs/architecture.md for the tree).
func TestCommandPackages(t *testing.T) {
	checked := 0
	for _, p := range goList(t, "./cmd/...") {
		if cmdRole(p) != "command" && cmdRole(p) != "shared" {
			continue
		}
		checked++
		for _, d := range deps(t, p) {
			if why := cmdImportViolation(p, d); why != "" {
				t.Errorf("%s imports %s: %s", strings.TrimPrefix(p, module+"/"), strings.TrimPrefix(d, module+"/"), why)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d command packages under cmd/: the layout this test knows has moved", checked)
	}
}

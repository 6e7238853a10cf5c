package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// committed is where `make docs` writes, seen from this package's directory.
const committed = "../../../docs"

// TestGeneratedDocsCurrent: the committed command reference and man pages
// are what the command tree generates now, whatever the environment of
// whoever generated them (cliff's width variables change flag defaults).
func TestGeneratedDocsCurrent(t *testing.T) {
	t.Setenv("CLIFF_MAX_TERM_WIDTH", "77")
	t.Setenv("CLIFF_FIT_WIDTH", "1")
	fresh := t.TempDir()
	if err := generate(fresh); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"reference", "man"} {
		want := readTree(t, filepath.Join(fresh, sub))
		got := readTree(t, filepath.Join(committed, sub))
		if len(want) == 0 {
			t.Fatalf("%s: nothing generated", sub)
		}
		for name, w := range want {
			g, ok := got[name]
			switch {
			case !ok:
				t.Errorf("docs/%s/%s is missing: run `make docs` and commit the result", sub, name)
			case !bytes.Equal(g, w):
				t.Errorf("docs/%s/%s is stale: run `make docs` and commit the result", sub, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("docs/%s/%s belongs to no command: run `make docs` (it removes it) and commit the result", sub, name)
			}
		}
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// TestManPagesOfEveryCommand: each runnable command has its page, named as
// `man rpctl-migrate-inventory` finds it, with no cobra date stamp.
func TestManPagesOfEveryCommand(t *testing.T) {
	fresh := t.TempDir()
	if err := generate(fresh); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rpctl.1", "rpctl-migrate-inventory.1", "rpctl-claims-heal.1", "rpctl-completion-bash.1"} {
		b, err := os.ReadFile(filepath.Join(fresh, "man", name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("Auto generated")) {
			t.Errorf("%s carries cobra's generation stamp", name)
		}
	}
	md, err := os.ReadFile(filepath.Join(fresh, "reference", "rpctl_migrate_inventory.md"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(md, []byte("Auto generated")) {
		t.Error("rpctl_migrate_inventory.md carries cobra's generation stamp")
	}
}

// TestHelpMarkdown: help text reads the same after markdown rendering:
// markup characters are literal, laid-out blocks stay blocks.
func TestHelpMarkdown(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"from pci_stats and numa_topology", `from pci\_stats and numa\_topology`},
		{"CUSTOM_* <uuid> [x] a|b", `CUSTOM\_\* \<uuid\> \[x\] a\|b`},
		{"line\n- not a list\n1. nor this", "line\n\\- not a list\n\\1. nor this"},
		{"intro\n\nExit codes:\n    0  done", "intro\n\n```\nExit codes:\n    0  done\n```"},
	} {
		if got := helpMarkdown(tt.in); got != tt.want {
			t.Errorf("helpMarkdown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestGeneratorNotInBinary: cobra/doc and its renderer stay out of the
// binary operators run.
func TestGeneratorNotInBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/rpctl/rpctl/cmd/rpctl").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/spf13/cobra") {
		t.Fatalf("go list -deps gave no cobra: %q", deps)
	}
	for _, p := range deps {
		if p == "github.com/spf13/cobra/doc" || strings.HasPrefix(p, "github.com/cpuguy83/go-md2man") || strings.HasPrefix(p, "github.com/rpctl/rpctl/cmd/internal/gendocs") {
			t.Errorf("rpctl links %s", p)
		}
	}
}

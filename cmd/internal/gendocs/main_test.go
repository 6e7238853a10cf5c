package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// TestDocsListGlobalFlagsOnce (issue 39): as --help does
// (cmd.TestHelpShowsGlobalFlagsOnce), the generated pages list the global
// flags on the root's and the options topic's page only; every other
// command's markdown and man page names the options topic instead of
// repeating them under "Options inherited from parent commands".
func TestDocsListGlobalFlagsOnce(t *testing.T) {
	fresh := t.TempDir()
	if err := generate(fresh); err != nil {
		t.Fatal(err)
	}
	root := commandTree(false)
	var globals []string
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) { globals = append(globals, f.Name) })
	if len(globals) < 20 {
		t.Fatalf("%d global flags", len(globals))
	}
	// A command's own flag of a global's name (none today) is its own.
	local := map[string]map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		own := map[string]bool{}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { own[f.Name] = true })
		local[pageName(c, "_")] = own
		local[pageName(c, "-")] = own
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	for _, kind := range []struct {
		dir, ext, sep, link, inherited string
	}{
		{"reference", ".md", "_", "[rpctl options](rpctl_options.md)", "Options inherited"},
		{"man", ".1", "-", `\fBrpctl\-options(1)\fP`, "INHERITED"},
	} {
		pages := readTree(t, filepath.Join(fresh, kind.dir))
		n := 0
		for name, b := range pages {
			page := string(b)
			base := strings.TrimSuffix(name, kind.ext)
			all := base == "rpctl" || base == "rpctl"+kind.sep+"options"
			if !all {
				n++
				if strings.Contains(page, kind.inherited) {
					t.Errorf("%s/%s lists inherited flags", kind.dir, name)
				}
				if !strings.Contains(page, kind.link) {
					t.Errorf("%s/%s does not name the options topic", kind.dir, name)
				}
			}
			for _, g := range globals {
				has := listsFlag(page, g)
				switch {
				case all && !has:
					t.Errorf("%s/%s does not list the global flag --%s", kind.dir, name, g)
				case !all && has && !local[base][g]:
					t.Errorf("%s/%s repeats the global flag --%s", kind.dir, name, g)
				}
			}
		}
		if n < 60 {
			t.Errorf("%s: only %d command pages read", kind.dir, n)
		}
	}
}

// listsFlag: page lists flag name as pflag's FlagUsages does (a line
// "      --name type  usage" or "  -c, --name ...", in a code block) or as
// cobra's man pages do (\fB--name\fP); a mention in an example or a
// sentence is not a listing.
func listsFlag(page, name string) bool {
	if strings.Contains(page, `\fB--`+name+`\fP`) {
		return true
	}
	re := regexp.MustCompile(`(?m)^\s+(-[a-zA-Z], )?--` + regexp.QuoteMeta(name) + `[ =\[]`)
	return re.MatchString(page)
}

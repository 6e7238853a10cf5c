package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// setFlags gives every local flag of every command of root a value other
// than its default (the first candidate the flag accepts that changes it)
// and returns command path + flag name -> value.
func setFlags(t *testing.T, root *cobra.Command) map[string]string {
	t.Helper()
	got := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			for _, v := range []string{"7", "true", "nested", "x=y*", "x"} {
				if fl.Value.Set(v) == nil && fl.Value.String() != fl.DefValue {
					got[c.CommandPath()+" --"+fl.Name] = fl.Value.String()
					return
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(got) == 0 {
		t.Fatal("no flag took a value")
	}
	return got
}

// The tests run rpctl in one process, many invocations side by side (and
// anything else that embeds cmd may too): one invocation's flag values
// must belong to its own command tree. Building a second tree is what
// every other invocation does while the first one runs; before the values
// lived in the trees, it reset the migrations' flags (--layout,
// --shared-storage, the ratios, --prune...) of the first to their
// defaults, so a second `migrate all --layout nested` run beside another
// test planned the flat layout and switched every migrated node back.
func TestFlagValuesBelongToTheirTree(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	a := NewCmdRoot(cmdutil.NewFactory(ios), "test")
	want := setFlags(t, a)
	NewCmdRoot(cmdutil.NewFactory(ios), "test")
	after := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			after[c.CommandPath()+" --"+fl.Name] = fl.Value.String()
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a)
	for k, v := range want {
		if after[k] != v {
			t.Errorf("%s: %q after another command tree was built, want %q", k, after[k], v)
		}
	}
}

// The operator-visible effect, end to end on a sample cloud migrated
// nested: an invocation parsed with --layout nested, then another whole
// invocation (flat), then the first one's dry run: it must still plan the
// nested layout, i.e. nothing to change.
func TestMigrateLayoutSurvivesAnotherInvocation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	run := func(args ...string) string {
		t.Helper()
		ios, _, _, errOut := iostreams.Test()
		if code := Run(context.Background(), ios, "test", append([]string{"--db", db}, args...)); code != 0 {
			t.Fatalf("rpctl %v: exit %d: %s", args, code, errOut)
		}
		return errOut.String()
	}
	run("sample-cloud", "--seed", "3", "--nodes", "8")
	run("migrate", "inventory", "--layout", "nested", "--shared-storage", "ceph=*")

	ios, _, _, errOut := iostreams.Test()
	args := []string{"--db", db, "migrate", "inventory", "--layout", "nested", "--shared-storage", "ceph=*", "--dry-run"}
	root := NewCmdRoot(cmdutil.NewFactory(ios), "test")
	c, rest, err := root.Find(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	// Another invocation, flat, runs while the first has parsed its flags.
	if out := run("migrate", "inventory", "--dry-run"); !strings.Contains(out, "0 unchanged") {
		t.Fatalf("the flat dry run should plan a switch of every node: %s", out)
	}
	c.SetContext(context.Background())
	if err := c.RunE(c, nil); err != nil {
		t.Fatalf("dry run: %v: %s", err, errOut)
	}
	if !strings.Contains(errOut.String(), ": 0 compute nodes to migrate or skip") {
		t.Errorf("the nested dry run planned changes on a cloud migrated nested:\n%s", errOut)
	}
}

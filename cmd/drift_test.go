package cmd_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/status"
)

// TestStatusHelpListsEveryCheck (issue 21): status' help names every check
// of the registry, in order (it listed 9 of 10).
func TestStatusHelpListsEveryCheck(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	checks := status.Checks(&status.Env{})
	if len(checks) < 10 {
		t.Fatalf("the registry has %d checks", len(checks))
	}
	for _, path := range [][]string{{"status"}, {"upgrade", "check"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		at := 0
		for _, ch := range checks {
			i := strings.Index(c.Long[at:], ch.Name)
			if i < 0 {
				t.Errorf("%s --help does not list %q (after position %d)", c.CommandPath(), ch.Name, at)
				continue
			}
			at += i + len(ch.Name)
		}
	}
}

// TestReadOnlyHelpShowsOwnCodes (issue 21): a command that only reads
// (list, show, tree) does not document the write commands' "not applied"
// code.
func TestReadOnlyHelpShowsOwnCodes(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		top := strings.Fields(c.CommandPath())
		if len(top) < 2 || !strings.Contains(" provider inventory usage resource-class trait ", " "+top[1]+" ") {
			return
		}
		switch c.Name() {
		case "list", "show", "tree":
			n++
			for _, e := range cmdutil.ExitCodesOf(c) {
				if e.Code == 1 {
					t.Errorf("%s documents exit 1 (%s), which a read never gives", c.CommandPath(), e.Meaning)
				}
			}
		}
	}
	walk(root)
	if n < 8 {
		t.Errorf("only %d read-only store commands found", n)
	}
}

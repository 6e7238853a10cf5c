package cmd_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
)

// TestHelpShowsGlobalFlagsOnce (issue 39): no subcommand's help repeats
// the global flags (a line names `rpctl options` instead); `rpctl options`
// lists every one of them, and the root's help does too, as
// openstackclient's `openstack --help`.
func TestHelpShowsGlobalFlagsOnce(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	var globals []*pflag.Flag
	root.PersistentFlags().VisitAll(func(fl *pflag.Flag) { globals = append(globals, fl) })
	if len(globals) < 20 {
		t.Fatalf("%d global flags", len(globals))
	}
	help := func(c *cobra.Command) string {
		var b strings.Builder
		c.SetOut(&b)
		c.HelpFunc()(c, nil)
		return b.String()
	}
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if !c.HasParent() || c.Name() == "options" || c.Name() == "help" || c.Name() == "completion" || c.Parent().Name() == "completion" {
			return
		}
		n++
		h := help(c)
		for _, g := range globals {
			if c.LocalNonPersistentFlags().Lookup(g.Name) == nil && strings.Contains(h, g.Usage) {
				t.Errorf("%s --help repeats the global flag --%s", c.CommandPath(), g.Name)
				return
			}
		}
		if !strings.Contains(h, "Global flags (databases, Placement API, output format and columns, logging): rpctl options") {
			t.Errorf("%s --help does not name rpctl options", c.CommandPath())
		}
	}
	walk(root)
	if n < 60 {
		t.Errorf("only %d commands' help read", n)
	}
	opts, _, err := root.Find([]string{"options"})
	if err != nil || opts.Name() != "options" {
		t.Fatalf("no options topic: %v", err)
	}
	for name, h := range map[string]string{"rpctl options": help(opts), "rpctl --help": help(root)} {
		for _, g := range globals {
			if !strings.Contains(h, "--"+g.Name+" ") || !strings.Contains(h, g.Usage) {
				t.Errorf("%s does not list --%s", name, g.Name)
			}
		}
	}
}

// TestEveryCommandHasExamples (issue 39): every command an operator runs
// has an Examples section, and every example is that command with flags it
// takes (parsed as the command line would be).
func TestEveryCommandHasExamples(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	n := 0
	for _, c := range cmdutil.RunnableCommands(root) {
		if c.Name() == "help" || strings.HasPrefix(c.CommandPath(), "rpctl completion") {
			continue
		}
		var b strings.Builder
		c.SetOut(&b)
		c.HelpFunc()(c, nil)
		if !strings.Contains(b.String(), "\nExamples:\n") {
			t.Errorf("%s --help has no examples", c.CommandPath())
			continue
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
			if line == "" || !strings.HasPrefix(line, "rpctl ") {
				continue
			}
			if strings.ContainsAny(line, `'"`) {
				continue // quoted arguments: not split here
			}
			n++
			args := strings.Fields(line)[1:]
			fresh := cmd.NewCmdRoot(commandTree(), "test")
			found, rest, err := fresh.Find(args)
			if err != nil || found.CommandPath() != c.CommandPath() {
				t.Errorf("%s: example %q runs %v (%v)", c.CommandPath(), line, found.CommandPath(), err)
				continue
			}
			if err := found.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
			}
		}
	}
	if n < 60 {
		t.Errorf("only %d examples checked", n)
	}
}

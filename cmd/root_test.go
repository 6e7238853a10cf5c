package cmd

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/iostreams"
)

func TestCommandName(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := newRootFlags(cmdutil.NewFactory(ios), "test")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"candidates", "--query", "x"}, "candidates"},
		{[]string{"--placement-db", "mysql://u:p@h/db", "candidates"}, "candidates"},
		{[]string{"--placement-db=mysql://u:p@h/db", "-f", "json", "candidates"}, "candidates"},
		{[]string{"-fjson", "--debug", "migrate", "all"}, "migrate"},
		{[]string{"-q", "--cell-db", "a", "--cell-db", "b", "status"}, "status"},
		{[]string{"--os-token", "status", "inventory"}, "inventory"}, // the value is not the command
		{[]string{"--no-such-flag", "status"}, ""},
		{[]string{"-qz", "status"}, ""},
		{[]string{"--", "status"}, ""},
		{[]string{"help", "status"}, "help"},
		{[]string{"--version"}, "--version"},
		{[]string{"-q", "--version", "status"}, "--version"},
		{[]string{"status", "--version"}, "status"},
	} {
		if got := commandName(root, tc.args); got != tc.want {
			t.Errorf("commandName(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestRootForSameSubtree: the tree NewCmdRootFor builds for a command is,
// below that command, the whole tree's: every command's usage, help text,
// flags and their annotations; and the secret flags RegisterSecrets
// masks are the same (all of them are root's today).
func TestRootForSameSubtree(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	whole := NewCmdRoot(cmdutil.NewFactory(ios), "test")
	describe := func(root *cobra.Command, name string) map[string]string {
		out := map[string]string{}
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			var b strings.Builder
			b.WriteString(c.UsageString() + "\n" + c.Short + "\n" + c.Long + "\n" + c.Example + "\n")
			c.Flags().VisitAll(func(fl *pflag.Flag) {
				b.WriteString(fl.Name + " " + fl.DefValue + " " + fl.NoOptDefVal + " ")
				for _, k := range slices.Sorted(maps.Keys(fl.Annotations)) {
					b.WriteString(k + "=" + strings.Join(fl.Annotations[k], ",") + " ")
				}
				b.WriteString("\n")
			})
			out[c.CommandPath()] = b.String()
			for _, s := range c.Commands() {
				walk(s)
			}
		}
		for _, c := range root.Commands() {
			if c.Name() == name {
				walk(c)
			}
		}
		return out
	}
	for _, tc := range topCommands {
		args := []string{"--placement-db", "x.db", tc.name}
		part := NewCmdRootFor(cmdutil.NewFactory(ios), "test", args)
		if n := len(part.Commands()); n != 2 { // the command and the options topic
			t.Errorf("%s: the tree holds %d top-level commands, want it and the options topic", tc.name, n)
		}
		want, got := describe(whole, tc.name), describe(part, tc.name)
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("%s: %d commands in the subtree, the whole tree has %d", tc.name, len(got), len(want))
		}
		for path, w := range want {
			if got[path] != w {
				t.Errorf("%s differs from the whole tree's:\n%s\nwant\n%s", path, got[path], w)
			}
		}
		if w, g := cmdutil.RegisterSecrets(whole, []string{"--placement-db", "mysql://u:pw@h/db", tc.name, "--os-token", "tok"}),
			cmdutil.RegisterSecrets(part, []string{"--placement-db", "mysql://u:pw@h/db", tc.name, "--os-token", "tok"}); strings.Join(w, " ") != strings.Join(g, " ") {
			t.Errorf("%s: secrets masked as %q, the whole tree masks %q", tc.name, g, w)
		}
	}
	// Every top-level command of the whole tree is in topCommands.
	for _, c := range whole.Commands() {
		switch c.Name() {
		case cmdutil.OptionsTopic, "help", "completion":
			continue
		}
		found := false
		for _, tc := range topCommands {
			found = found || tc.name == c.Name()
		}
		if !found {
			t.Errorf("top-level command %q is not in topCommands", c.Name())
		}
	}
}

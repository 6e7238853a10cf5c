package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/testdb"
)

func commandTree() *cmdutil.Factory {
	ios, _, _, _ := iostreams.Test()
	return cmdutil.NewFactory(ios)
}

// TestDocsExitCodes: the exit-code table of docs/usage.md is the one the
// commands declare (and print in --help).
func TestDocsExitCodes(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	want := cmdutil.ExitCodesMarkdown(root)
	page := filepath.Join(testdb.RepoRoot(), "docs", "usage.md")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- exit-codes:begin -->\n", "<!-- exit-codes:end -->"
	head, rest, ok1 := strings.Cut(string(b), begin)
	got, tail, ok2 := strings.Cut(rest, end)
	if ok1 && ok2 && got != want && *update {
		got = want
		os.WriteFile(page, []byte(head+begin+want+end+tail), 0o644)
	}
	if !ok1 || !ok2 || got != want {
		t.Errorf("docs/usage.md's exit-code table (between %q and %q) is not the commands' table (go test ./cmd -run TestDocsExitCodes -update rewrites it); it should be:\n%s", strings.TrimSpace(begin), end, want)
	}
}

// TestHelpShowsExitCodes: every command's --help ends with its table, and
// every table has the common codes.
func TestHelpShowsExitCodes(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	for _, c := range cmdutil.RunnableCommands(root) {
		// The table joins the help when it is shown.
		var help strings.Builder
		c.SetOut(&help)
		c.HelpFunc()(c, nil)
		if !strings.Contains(help.String(), "Exit codes:\n") || strings.Count(help.String(), "Exit codes:") != 1 {
			t.Errorf("%s --help does not end with one exit-code table:\n%s", c.CommandPath(), help.String())
		}
		codes := map[int]bool{}
		for _, e := range cmdutil.ExitCodesOf(c) {
			if codes[e.Code] {
				t.Errorf("%s: code %d listed twice", c.CommandPath(), e.Code)
			}
			codes[e.Code] = true
		}
		if !codes[0] || !codes[255] || !codes[130] || !codes[143] {
			t.Errorf("%s: table %v lacks a common code", c.CommandPath(), cmdutil.ExitCodesOf(c))
		}
	}
}

// TestUsageErrors: unknown flags (before or after the subcommand), unknown
// or missing subcommands and bad arguments exit 255 with one line naming
// the real problem, never a success code and never cobra's help.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-such-flag", "-f", "json", "status"}, "unknown flag: --no-such-flag"},
		{[]string{"--no-such-flag", "compute-node", "list"}, "unknown flag: --no-such-flag"},
		{[]string{"compute-node", "list", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"migrate", "all", "--max-count"}, "flag needs an argument"},
		// A bad --max-count value is nova-manage's 127, not a usage error
		// (TestNumberFlags).
		{[]string{"migrate"}, "missing subcommand"},
		{[]string{"migrate", "nope"}, `unknown command "nope"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"init", "extra"}, `unknown command "extra"`},
		{[]string{"-f", "xml", "compute-node", "list"}, "invalid --format"},
	} {
		out, errOut, code := cmdtest.Rpctl(t, tt.args...)
		if code != 255 || out != "" || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 255 and one line with %q", tt.args, code, out, errOut, tt.want)
		}
	}
	for _, c := range cmdutil.RunnableCommands(cmd.NewCmdRoot(commandTree(), "test")) {
		args := append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "rpctl ")), "--no-such-flag")
		if _, errOut, code := cmdtest.Rpctl(t, args...); code != 255 || !strings.Contains(errOut, "unknown flag: --no-such-flag") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

package cmdutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError is a request rpctl (or Placement) refuses: exit 2 with a
// one-line message.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf(format, args...)}
}

// Exit codes follow nova-manage's scheme, so that operators' loops such as
// `while rpctl migrate all --max-count 1000; [ $? = 1 ]` end on every error:
// an error never shares a code with a success state (0, or 1 "more may
// remain" / "warning").
const (
	// ExitOK: done, nothing left, all checks passed.
	ExitOK = 0
	// ExitMore: migrate: some records migrated, more may remain; status:
	// at least one warning.
	ExitMore = 1
	// ExitFailed: migrate: a migration failed or rows were skipped as bad;
	// status: at least one failure; candidates: Placement would answer 400.
	ExitFailed = 2
	// ExitBadMaxCount: migrate's --max-count is not a positive integer
	// (nova-manage's 127).
	ExitBadMaxCount = 127
	// ExitSIGINT and ExitSIGTERM: interrupted (128 + signal number).
	ExitSIGINT  = 130
	ExitSIGTERM = 143
	// ExitUnexpected: an unexpected error: usage (unknown flag or command,
	// bad argument), config file, missing or unreachable database, internal.
	ExitUnexpected = 255
)

// ExitCodeRow is one row of a command's exit-code table.
type ExitCodeRow struct {
	Code    int
	Meaning string
}

// ExitCodes is a command's exit-code table, rendered into its --help and
// docs/usage.md.
type ExitCodes []ExitCodeRow

// commonExitCodes end every command's table.
var commonExitCodes = ExitCodes{
	{ExitSIGINT, "interrupted (SIGINT)"},
	{ExitSIGTERM, "terminated (SIGTERM)"},
	{ExitUnexpected, "unexpected error: usage (unknown flag, command or bad argument), config file, database missing or unreachable, internal error"},
}

// defaultExitCodes is the table of a command that declares none.
var defaultExitCodes = ExitCodes{{ExitOK, "done"}}

const exitCodesAnnotation = "rpctl/exit-codes"

// SetExitCodes declares c's exit codes besides the common ones (130, 143,
// 255), which every command has. The table is appended to c's --help by
// NewCmdRoot and listed in docs/usage.md (TestDocsExitCodes). Commands that
// declare nothing get "0 done" plus the common codes.
func SetExitCodes(c *cobra.Command, codes ...ExitCodeRow) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	var b strings.Builder
	for _, e := range codes {
		fmt.Fprintf(&b, "%d\t%s\n", e.Code, e.Meaning)
	}
	c.Annotations[exitCodesAnnotation] = b.String()
}

// ExitCodesOf returns c's full exit-code table, common codes included.
func ExitCodesOf(c *cobra.Command) ExitCodes {
	own := ownExitCodes(c)
	for i, e := range own {
		if e.Code == logFileExitCode.Code {
			own[i].Meaning += "; " + logFileExitCode.Meaning
			return append(own, commonExitCodes...)
		}
	}
	at := len(own)
	for i, e := range own {
		if e.Code > logFileExitCode.Code {
			at = i
			break
		}
	}
	own = append(own[:at], append(ExitCodes{logFileExitCode}, own[at:]...)...)
	return append(own, commonExitCodes...)
}

// logFileExitCode is every command's: --log-file is global. It joins a
// command's own row 2 rather than repeating the code.
var logFileExitCode = ExitCodeRow{ExitFailed, "--log-file names an existing file (without --force), a file rpctl reads, no regular file (a directory, device, FIFO or socket), or a path whose directory is missing: nothing run"}

// ownExitCodes is what c declared (or the default), without the common codes.
func ownExitCodes(c *cobra.Command) ExitCodes {
	s, ok := c.Annotations[exitCodesAnnotation]
	if !ok {
		return append(ExitCodes(nil), defaultExitCodes...)
	}
	var own ExitCodes
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		code, meaning, _ := strings.Cut(line, "\t")
		n, _ := strconv.Atoi(code)
		own = append(own, ExitCodeRow{n, meaning})
	}
	return own
}

// Help renders the table for --help.
func (t ExitCodes) Help() string {
	var b strings.Builder
	b.WriteString("Exit codes:")
	for _, e := range t {
		fmt.Fprintf(&b, "\n  %3d  %s", e.Code, e.Meaning)
	}
	return b.String()
}

// Markdown renders the table as a docs/usage.md cell ("0 done; 1 …").
func (t ExitCodes) Markdown() string {
	parts := make([]string, len(t))
	for i, e := range t {
		parts[i] = fmt.Sprintf("%d %s", e.Code, strings.ReplaceAll(e.Meaning, "|", `\|`))
	}
	return strings.Join(parts, "; ")
}

// runnableCommands lists the commands a user can run, in --help order.
func runnableCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || cobraCompletion(c) {
			return
		}
		if c.Runnable() && c.HasParent() && !c.HasSubCommands() {
			out = append(out, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return out
}

// ExitCodesMarkdown is docs/usage.md's exit-code section: one row per command
// with its own codes, then the codes every command shares.
func ExitCodesMarkdown(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | exit codes |\n|---|---|\n")
	for _, c := range runnableCommands(root) {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.CommandPath(), ownExitCodes(c).Markdown())
	}
	b.WriteString("\nEvery command also exits ")
	b.WriteString(append(ExitCodes{logFileExitCode}, commonExitCodes...).Markdown())
	b.WriteString(".\n")
	return b.String()
}

// FinishCommandTree applies rpctl's conventions to every command once the
// tree is built, so that commands added by anyone follow them: the exit-code
// table at the end of --help (added when the help is shown), usage errors
// that exit 255 with a message that names the real problem.
func FinishCommandTree(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: ExitUnexpected, Err: err}
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
			// A group run without (or with an unknown) subcommand is a usage
			// error; cobra would print the help and exit 0, or, for an
			// unknown flag before the subcommand, blame a wrong word.
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					if !c.HasParent() {
						return c.Help()
					}
					return BadCommandLine("%s: missing subcommand (one of: %s)", c.CommandPath(), subcommandNames(c))
				}
				return BadCommandLine("unknown command %q for %q (one of: %s)", args[0], c.CommandPath(), subcommandNames(c))
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	// The exit-code table joins a command's help when the help is shown:
	// rendering every command's table at start-up was paid by every run.
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		addExitCodes(c)
		addExample(c)
		fillOptionsTopic(c)
		help(c, args)
	})
}

// addExitCodes ends a runnable command's help text with its exit-code
// table, once. Cobra's completion commands, which it adds only when it
// executes, are not rpctl's: they have none.
func addExitCodes(c *cobra.Command) {
	if !c.Runnable() || !c.HasParent() || c.HasSubCommands() || c.Name() == "help" || cobraCompletion(c) || strings.Contains(c.Long, "Exit codes:") {
		return
	}
	long := c.Long
	if long == "" {
		long = c.Short
	}
	c.Long = strings.TrimRight(long, "\n") + "\n\n" + ExitCodesOf(c).Help()
}

// FinishHelp gives every command of root the help text --help shows, exit
// codes included, for generators that read the texts (docs, man pages).
func FinishHelp(root *cobra.Command) {
	for _, c := range runnableCommands(root) {
		addExitCodes(c)
		addExample(c)
	}
	for _, c := range root.Commands() {
		fillOptionsTopic(c)
	}
}

// cobraCompletion: c is cobra's completion command or one below it (cobra
// adds them when it executes; they are not rpctl's and have no codes).
func cobraCompletion(c *cobra.Command) bool {
	for p := c; p.HasParent(); p = p.Parent() {
		if p.Name() == "completion" && !p.Parent().HasParent() {
			return true
		}
	}
	return false
}

func subcommandNames(c *cobra.Command) string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return strings.Join(names, ", ")
}

// BadCommandLine is a usage error: exit 255 with a one-line message.
func BadCommandLine(format string, args ...any) error {
	return &ExitError{Code: ExitUnexpected, Err: fmt.Errorf(format, args...)}
}

// ExitError ends rpctl with a specific exit code. A nil Err prints nothing.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an error that makes rpctl exit with code, printing nothing.
func Exit(code int) error { return &ExitError{Code: code} }

// ExitCode maps an error to the process exit code: ExitError's own code,
// else 255 (an unexpected error never looks like a result).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitUnexpected
}

// RunnableCommands lists the commands a user can run (leaves of the tree),
// for tests and documentation.
func RunnableCommands(root *cobra.Command) []*cobra.Command { return runnableCommands(root) }

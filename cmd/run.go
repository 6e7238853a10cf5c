package cmd

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/iostreams"
)

// Run executes rpctl with args on ios and returns the process exit code.
// Errors are printed once, as one line on standard error; an ExitError
// without an error (a warning result, say) prints nothing.
func Run(ctx context.Context, ios *iostreams.IOStreams, version string, args []string) int {
	root := NewCmdRoot(NewFactory(ios), version)
	root.SetArgs(providerApplyArgs(args))
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	err := root.ExecuteContext(ctx)
	if code, name, ok := signalExit(ctx); ok && err != nil {
		// Whatever the command was doing when the signal came, the
		// signal is why it stopped.
		fmt.Fprintln(ios.ErrOut, "rpctl: "+interrupted(name))
		return code
	}
	if err != nil {
		if ee, ok := err.(*ExitError); !ok || ee.Err != nil {
			// Errors echo hostnames and query values: control
			// characters in them must not reach the terminal raw.
			fmt.Fprintln(ios.ErrOut, "rpctl: "+sanitize.String(err.Error()))
		}
	}
	return ExitCode(err)
}

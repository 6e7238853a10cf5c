package cmd

import (
	"context"
	"fmt"

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
	if err != nil {
		if ee, ok := err.(*ExitError); !ok || ee.Err != nil {
			fmt.Fprintln(ios.ErrOut, "rpctl: "+err.Error())
		}
	}
	return ExitCode(err)
}

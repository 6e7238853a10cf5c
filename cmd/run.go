package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	providercmd "github.com/rpctl/rpctl/cmd/provider"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/logging"
	"github.com/rpctl/rpctl/internal/sanitize"
)

// Main runs the commands as a program (os.Args, standard streams, SIGINT
// and SIGTERM cancel) and exits with their code: the main of rpctl and of
// the helper programs, which set their hook (DrawChart, ServeMetrics) first.
func Main(version, commit, date string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmdutil.Build = cmdutil.BuildInfo{Version: version, Commit: commit, Date: date}
	code := Run(ctx, iostreams.System(), version, os.Args[1:])
	stop()
	os.Exit(code)
}

// Run executes rpctl with args on ios and returns the process exit code.
// Errors are printed once, as one line on standard error; an ExitError
// without an error (a warning result, say) prints nothing.
func Run(ctx context.Context, ios *iostreams.IOStreams, version string, args []string) int {
	f := cmdutil.NewFactory(ios)
	root := NewCmdRootFor(f, version, args)
	f.Args = cmdutil.RegisterSecrets(root, args)
	// -q silences ios.ErrOut for the run; errors still reach standard error.
	errOut := ios.ErrOut
	ios.ErrOut = logging.RedactingWriter(errOut)
	root.SetArgs(providercmd.ProviderApplyArgs(args))
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	err := root.ExecuteContext(ctx)
	if err != nil && f.LogFile != "" {
		// The log file tells the whole story; standard error keeps its line.
		logging.Logger().Error("rpctl: "+err.Error(), "exit", cmdutil.ExitCode(err))
	}
	if f.CloseLog != nil {
		if cerr := f.CloseLog(); cerr != nil && err == nil {
			err = fmt.Errorf("--log-file: %w", cerr)
		}
	}
	ios.ErrOut = errOut
	if code, name, ok := cmdutil.SignalExit(ctx); ok && err != nil {
		// Whatever the command was doing when the signal came, the
		// signal is why it stopped.
		fmt.Fprintln(errOut, "rpctl: "+cmdutil.Interrupted(name))
		return code
	}
	if err != nil {
		var ee *cmdutil.ExitError
		if !errors.As(err, &ee) || ee.Err != nil {
			// Errors echo hostnames and query values: control
			// characters in them must not reach the terminal raw. Joined
			// errors (one per flavor, say) are one line each.
			for _, line := range cmdutil.ErrorLines(err) {
				fmt.Fprintln(errOut, "rpctl: "+sanitize.String(logging.Redact(line)))
			}
		}
	}
	return cmdutil.ExitCode(err)
}

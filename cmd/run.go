package cmd

import (
	"context"
	"errors"
	"fmt"
	"github.com/spf13/cobra"
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
	cmdutil.Build = cmdutil.BuildInfo{Version: version, Commit: commit, Date: date}
	// The tree is built before the signal watcher starts: building it
	// decides whether the process runs on one P (topCommand.oneP), and
	// that pays only before a second goroutine has run (see newCmdRoot).
	r := newRun(iostreams.System(), version, os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Not stopped before the exit: stop waits for the signal watcher's
	// thread to go idle, 0.17 to 0.38 ms of a 10 ms command (paired
	// medians; issue 35), and the process ends next anyway; a signal that
	// comes now is still caught, so the exit code stays the command's.
	// (Deferred for vet's lostcancel check: os.Exit runs no deferred
	// call.)
	defer stop()
	os.Exit(r.execute(ctx))
}

// Run executes rpctl with args on ios and returns the process exit code.
// Errors are printed once, as one line on standard error; an ExitError
// without an error (a warning result, say) prints nothing.
func Run(ctx context.Context, ios *iostreams.IOStreams, version string, args []string) int {
	return newRun(ios, version, args).execute(ctx)
}

// run is one command line, its tree built.
type run struct {
	ios  *iostreams.IOStreams
	f    *cmdutil.Factory
	root *cobra.Command
	args []string
}

func newRun(ios *iostreams.IOStreams, version string, args []string) *run {
	f := cmdutil.NewFactory(ios)
	return &run{ios: ios, f: f, root: NewCmdRootFor(f, version, args), args: args}
}

func (r *run) execute(ctx context.Context) int {
	ios, f, root, args := r.ios, r.f, r.root, r.args
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

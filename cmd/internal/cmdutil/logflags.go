package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/internal/logging"
)

// SetupLogging applies --debug, --log-file and -q before a command runs.
func SetupLogging(c *cobra.Command, f *Factory) error {
	o := logging.Options{Debug: f.Debug, Stderr: f.IO.ErrOut}
	if f.LogFile != "" {
		file, err := f.OutputPolicy(c).OpenLog("--log-file", f.LogFile)
		if err != nil {
			return FileSafetyExit(err)
		}
		o.File = file
	}
	closeFn, err := logging.Setup(o)
	if err != nil {
		return fmt.Errorf("--log-file: %w", err)
	}
	f.CloseLog = closeFn
	if f.Debug || f.LogFile != "" {
		logging.Logger().Info("rpctl start", "args", strings.Join(f.Args, " "))
	}
	if f.Quiet {
		f.IO.ErrOut = io.Discard
	}
	return nil
}

package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/rpctl/rpctl/internal/logging"
)

// setupLogging applies --debug, --log-file and -q before a command runs.
func setupLogging(f *Factory) error {
	closeFn, err := logging.Setup(logging.Options{Debug: f.Debug, File: f.LogFile, Stderr: f.IO.ErrOut})
	if err != nil {
		return fmt.Errorf("--log-file: %w", err)
	}
	f.closeLog = closeFn
	if f.Debug || f.LogFile != "" {
		logging.Logger().Info("rpctl start", "args", strings.Join(f.args, " "))
	}
	if f.Quiet {
		f.IO.ErrOut = io.Discard
	}
	return nil
}

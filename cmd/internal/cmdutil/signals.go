package cmdutil

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// SignalExit maps the cause of a cancelled command context (what
// signal.NotifyContext sets: "interrupt signal received", "terminated
// signal received") to its exit code and name; ok is false when no signal
// ended the run.
func SignalExit(ctx context.Context) (code int, name string, ok bool) {
	if ctx.Err() == nil {
		return 0, "", false
	}
	cause := context.Cause(ctx).Error()
	switch {
	case strings.HasPrefix(cause, syscall.SIGTERM.String()):
		return ExitSIGTERM, "SIGTERM", true
	case strings.HasPrefix(cause, os.Interrupt.String()):
		return ExitSIGINT, "SIGINT", true
	}
	return 0, "", false
}

// Interrupted is the one line printed when a signal stopped the work.
func Interrupted(name string) string {
	return fmt.Sprintf("interrupted by %s", name)
}

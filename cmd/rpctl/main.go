// Command rpctl is the operator CLI; see README.md and docs/.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// Set by `make build` (-ldflags -X); `go install` leaves them empty and
// rpctl --version falls back to the build info Go records.
var (
	version = "dev"
	commit  string
	date    string
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd.Build = cmd.BuildInfo{Version: version, Commit: commit, Date: date}
	code := cmd.Run(ctx, iostreams.System(), version, os.Args[1:])
	stop()
	os.Exit(code)
}

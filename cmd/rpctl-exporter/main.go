// Command rpctl-exporter is rpctl with the Prometheus exporter's server
// linked in: `rpctl exporter` runs it. It is a program of its own because
// client_golang registers collectors at package init, which every rpctl
// command (rpctl --version included) would otherwise pay.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/exporter"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// Set by `make build` (-ldflags -X), as for rpctl.
var (
	version = "dev"
	commit  string
	date    string
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd.Build = cmd.BuildInfo{Version: version, Commit: commit, Date: date}
	cmd.ServeMetrics = exporter.Serve
	code := cmd.Run(ctx, iostreams.System(), version, os.Args[1:])
	stop()
	os.Exit(code)
}

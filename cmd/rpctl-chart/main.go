// Command rpctl-chart is rpctl with capacity's chart drawing (gonum/plot)
// linked in: `rpctl capacity --plot` runs it. It is a program of its own
// because gonum/plot loads its fonts at package init, which every rpctl
// command (rpctl --version included) would otherwise pay.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpctl/rpctl/capacity/chart"
	"github.com/rpctl/rpctl/cmd"
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
	cmd.DrawChart = chart.Capacity
	code := cmd.Run(ctx, iostreams.System(), version, os.Args[1:])
	stop()
	os.Exit(code)
}

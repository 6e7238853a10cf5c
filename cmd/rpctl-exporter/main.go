// Command rpctl-exporter is rpctl with the Prometheus exporter's server
// linked in: `rpctl exporter` runs it. It is a program of its own because
// client_golang registers collectors at package init, which every rpctl
// command (rpctl --version included) would otherwise pay.
package main

import (
	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/exporter"
)

// Set by `make build` (-ldflags -X), as for rpctl.
var (
	version = "dev"
	commit  string
	date    string
)

func main() {
	cmd.ServeMetrics = exporter.Serve
	cmd.Main(version, commit, date)
}

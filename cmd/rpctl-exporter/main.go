// Command rpctl-exporter is rpctl with the Prometheus exporter's server
// linked in: `rpctl exporter` runs it. It is a program of its own because
// client_golang registers collectors at package init, which every rpctl
// command (rpctl --version included) would otherwise pay.
package main

import (
	"os"
	"runtime"

	"github.com/rpctl/rpctl/cmd"
	exportercmd "github.com/rpctl/rpctl/cmd/exporter"
	"github.com/rpctl/rpctl/internal/exporter"
)

// Set by `make build` (-ldflags -X), as for rpctl.
var (
	version = "dev"
	commit  string
	date    string
)

func main() {
	// Two Ps more than the CPUs, unless GOMAXPROCS is set: a collection
	// keeps one goroutine per CPU busy (capacity's workers; the audit and
	// the checks reading their databases beside them), and with no P
	// left idle a scrape's goroutine waits for the scheduler's next
	// preemption at each step (accept, read, write), some 10 ms each. The
	// collection's own parallelism stays at the CPUs (capacity counts on
	// runtime.NumCPU() workers at most).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.NumCPU() + 2)
	}
	exportercmd.ServeMetrics = exporter.Serve
	cmd.Main(version, commit, date)
}

// Command rpctl-chart is rpctl with capacity's chart drawing (gonum/plot)
// linked in: `rpctl capacity --plot` runs it. It is a program of its own
// because gonum/plot loads its fonts at package init, which every rpctl
// command (rpctl --version included) would otherwise pay.
package main

import (
	"github.com/rpctl/rpctl/capacity/chart"
	"github.com/rpctl/rpctl/cmd"
	capacitycmd "github.com/rpctl/rpctl/cmd/capacity"
)

// Set by `make build` (-ldflags -X), as for rpctl.
var version, commit, date = "dev", "", ""

func main() {
	capacitycmd.DrawChart = chart.Capacity
	cmd.Main(version, commit, date)
}

// Command rpctl is the operator CLI; see README.md and docs/.
package main

import (
	"github.com/rpctl/rpctl/cmd"
)

// Set by `make build` (-ldflags -X); `go install` leaves them empty and
// Rpctl --version falls back to the build info Go records.
var (
	version = "dev"
	commit  string
	date    string
)

func main() { cmd.Main(version, commit, date) }

// Command rpctl is the operator CLI; see the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/iostreams"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmd.Run(ctx, iostreams.System(), version, os.Args[1:])
	stop()
	os.Exit(code)
}

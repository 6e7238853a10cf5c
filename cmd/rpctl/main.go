// Command rpctl is the operator CLI; see the README.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/iostreams"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	io := iostreams.System()
	root := cmd.NewCmdRoot(cmd.NewFactory(io), version)
	err := root.ExecuteContext(ctx)
	if err != nil && err.Error() != "" {
		if ee, ok := err.(*cmd.ExitError); !ok || ee.Err != nil {
			fmt.Fprintln(io.ErrOut, "rpctl: "+err.Error())
		}
	}
	os.Exit(cmd.ExitCode(err))
}

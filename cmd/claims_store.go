package cmd

import "github.com/spf13/cobra"

// claimsStoreCommands are the `rpctl claims` subcommands of the list, audit,
// create/release and snapshot/diff half of issue #11; the parent command
// (cmd/claims.go) adds them.
func claimsStoreCommands(f *Factory) []*cobra.Command {
	return []*cobra.Command{
		NewCmdClaimsAudit(f),
	}
}

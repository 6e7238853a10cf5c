package cmd

import "github.com/spf13/cobra"

// claimsSubcommands are the `rpctl claims` subcommands that live in other
// files (claims_*.go); each registers itself in init.
var claimsSubcommands []func(*Factory) *cobra.Command

// registerClaimsCommand adds a `rpctl claims` subcommand.
func registerClaimsCommand(build func(*Factory) *cobra.Command) {
	claimsSubcommands = append(claimsSubcommands, build)
}

// NewCmdClaims builds `rpctl claims` and its subcommands.
func NewCmdClaims(f *Factory) *cobra.Command {
	parent := &cobra.Command{
		Use:   "claims",
		Short: "Placement allocations of instances and migrations",
	}
	for _, build := range claimsSubcommands {
		parent.AddCommand(build(f))
	}
	return parent
}

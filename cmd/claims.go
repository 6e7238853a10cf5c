package cmd

import "github.com/spf13/cobra"

// NewCmdClaims builds `rpctl claims`.
func NewCmdClaims(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "claims",
		Short: "Placement allocations (claims) of instances and migrations: list, audit, create, release, snapshot",
	}
	c.AddCommand(claimsStoreCommands(f)...)
	return c
}

package cmd

// The `rpctl claims` subcommands of the list, audit, create/release and
// snapshot/diff half of issue #11.
func init() {
	registerClaimsCommand(NewCmdClaimsList)
	registerClaimsCommand(NewCmdClaimsAudit)
	registerClaimsCommand(NewCmdClaimsSnapshot)
	registerClaimsCommand(NewCmdClaimsDiff)
	registerClaimsCommand(NewCmdClaimsCreate)
	registerClaimsCommand(NewCmdClaimsRelease)
}

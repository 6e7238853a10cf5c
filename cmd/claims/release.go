package claims

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// NewCmdClaimsRelease builds `rpctl claims release`.
func NewCmdClaimsRelease(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "release CONSUMER",
		Short: "Remove every allocation of a consumer (DELETE /allocations/{consumer})",
		Long: `Remove every allocation of CONSUMER and its consumer record in one transaction, as
Placement's DELETE /allocations/{consumer} does (no generation changes); with
--os-endpoint/--os-cloud, that call itself.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return claimsExit(runClaimsRelease(c, f, args[0]))
		},
	}
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: 0, Meaning: "released"},
		cmdutil.ExitCodeRow{Code: claims.ExitNoRelease, Meaning: "the consumer holds no allocation (nothing to do)"},
		cmdutil.ExitCodeRow{Code: claims.ExitBadInput, Meaning: "invalid input (not a uuid)" + claimsForbiddenRow},
	)
	return c
}

func runClaimsRelease(c *cobra.Command, f *cmdutil.Factory, consumer string) error {
	canonical, isUUID := candidates.CanonicalUUID(consumer)
	if !isUUID {
		return fmt.Errorf("%w: %q is not a uuid", claims.ErrBadInput, consumer)
	}
	// Placement's form, which both backends store and compare.
	consumer = canonical
	ctx := c.Context()
	var ok bool
	if f.UsePlacementAPI() {
		client, err := f.PlacementClient(ctx)
		if err != nil {
			return err
		}
		ok, err = placementclient.Claims{C: client}.Release(ctx, consumer)
		if err != nil {
			return err
		}
	} else {
		dbs, err := f.Databases(ctx, storage.NeedPlacement, 0)
		if err != nil {
			return err
		}
		defer dbs.Close()
		if ok, err = (placementdb.ClaimsLedger{DB: dbs.Placement}).Release(ctx, consumer); err != nil {
			return err
		}
	}
	if !ok {
		fmt.Fprintf(f.IO.ErrOut, "Consumer %s holds no allocation.\n", consumer)
		return cmdutil.Exit(claims.ExitNoRelease)
	}
	fmt.Fprintf(f.NoticeOut(), "Released the allocations of consumer %s.\n", consumer)
	return nil
}

package claims

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/storage/claimsnap"
)

// NewCmdClaimsDiff builds `rpctl claims diff`.
func NewCmdClaimsDiff(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "diff FILE",
		Short: "Show the claims that are new, released, resized or moved since a claims snapshot",
		Long: `Compare a claim store file (claims snapshot --out FILE, of this or any earlier layout
version) with the claims Placement holds now, consumer by consumer:
  new       the consumer holds claims now and held none in FILE
  released  it held claims in FILE and holds none now
  moved     the set of places (providers; host/node for files of layout 1, which has no
            provider uuid) changed
  resized   same places, different amounts

FILE is only read, never written: SQLite opens it read-only and immutable, and a file of an
older layout is read in that layout, not upgraded. An empty file, a SQLite database without
the claim tables or any other file is refused (127) and left byte-identical, as is a file of
a layout newer than this rpctl knows. With --os-endpoint/--os-cloud
the claims of now are read through the Placement API.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return claimsExit(runClaimsDiff(c, f, args[0]))
		},
	}
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: 0, Meaning: "no change"},
		cmdutil.ExitCodeRow{Code: 3, Meaning: "changes found"},
		cmdutil.ExitCodeRow{Code: claims.ExitBadInput, Meaning: "invalid input (missing, empty, foreign or too-new file; left untouched)" + claimsForbiddenRow},
	)
	return c
}

func runClaimsDiff(c *cobra.Command, f *cmdutil.Factory, file string) error {
	ctx := c.Context()
	before, _, err := claimsnap.Read(ctx, file)
	if err != nil {
		return fmt.Errorf("%w: %v", claims.ErrBadInput, err)
	}
	var now []claims.Claim
	err = shared.WithClaimsView(ctx, f, func(ledger claims.Ledger, cells []claims.CellView) (err error) {
		now, err = claims.Snapshot(ctx, ledger, cells)
		return err
	})
	if err != nil {
		return err
	}
	changes := claims.Diff(before, now)
	rows := output.Rows{Headers: []string{"change", "consumer", "before", "after"}}
	for _, ch := range changes {
		rows.Add(ch.Kind, ch.Consumer, ch.Before, ch.After)
	}
	if err := f.Write(rows, nil); err != nil {
		return err
	}
	if len(changes) > 0 {
		return cmdutil.Exit(3)
	}
	return nil
}

package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
)

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

// claimsViews views every cell for claims list, audit and snapshot.
func claimsViews(dbs *storage.Databases) []claims.CellView {
	out := make([]claims.CellView, len(dbs.Cells))
	for i, c := range dbs.Cells {
		out[i] = storage.ClaimsCellView{DB: c}
	}
	return out
}

// withClaimsView opens the cells and Placement (its database, or its API
// with --os-endpoint/--os-cloud) that list, audit, snapshot and diff read
// and calls fn with them.
func withClaimsView(ctx context.Context, f *Factory, fn func(ledger claims.Ledger, cells []claims.CellView) error) error {
	api := f.UsePlacementAPI()
	need := storage.NeedCells | storage.NeedPlacement
	if api {
		need = storage.NeedCells
	}
	dbs, err := f.Databases(ctx, need, 0)
	if err != nil {
		return err
	}
	defer dbs.Close()
	if api {
		client, err := f.PlacementClient(ctx)
		if err != nil {
			return err
		}
		return fn(&placementclient.ClaimsLedger{C: client}, claimsViews(dbs))
	}
	return fn(storage.ClaimsLedger{DB: dbs.Placement}, claimsViews(dbs))
}

// checkExpiry refuses a negative --expiry.
func checkExpiry(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: --expiry %s: must not be negative", claims.ErrBadInput, d)
	}
	return nil
}

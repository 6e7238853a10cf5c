package shared

import (
	"context"
	"fmt"
	"time"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// The `rpctl claims` subcommands of the list, audit, create/release and
// snapshot/diff half of issue #11.
// ClaimsCells wraps each cell database as the claims domain reads it: I is
// claims.Cell for healing, claims.CellView for list, audit and snapshot
// (celldb.Cell implements both, which storage asserts when built).
func ClaimsCells[I any](dbs []*storage.DB) []I {
	out := make([]I, len(dbs))
	for i, db := range dbs {
		out[i] = any(&celldb.Cell{DB: db}).(I)
	}
	return out
}

// WithClaimsView opens the cells and Placement (its database, or its API
// with --os-endpoint/--os-cloud) that list, audit, snapshot and diff read
// and calls fn with them.
func WithClaimsView(ctx context.Context, f *cmdutil.Factory, fn func(ledger claims.Ledger, cells []claims.CellView) error) error {
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
		return fn(&placementclient.ClaimsLedger{C: client}, ClaimsCells[claims.CellView](dbs.Cells))
	}
	return fn(placementdb.ClaimsLedger{DB: dbs.Placement}, ClaimsCells[claims.CellView](dbs.Cells))
}

// CheckExpiry refuses a negative --expiry.
func CheckExpiry(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: --expiry %s: must not be negative", claims.ErrBadInput, d)
	}
	return nil
}

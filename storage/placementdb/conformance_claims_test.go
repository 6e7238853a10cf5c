package placementdb_test

import (
	"testing"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/storetest"
)

// TestClaimsLedgerConformance: the database ledger passes claims.Ledger's
// conformance suite.
func TestClaimsLedgerConformance(t *testing.T) {
	storetest.ClaimsLedger(t, func(p placementtest.Placement) claims.Ledger { return placementdb.ClaimsLedger{DB: p.DB} })
}

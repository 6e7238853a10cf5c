// Package shared holds the command code that more than one command group
// runs: the provider/inventory helpers of the ad hoc Placement edits, the
// flavor and image flags of candidates, capacity and the exporter, the
// capacity input and status metric families the exporter serves beside
// capacity and status, and the claims commands' stores. It moved down from
// the command packages so that none imports a sibling.
package shared

import (
	"context"
	"math"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/flagnum"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
)

// Count is an integer flag that must be at least 1.
type Count struct {
	Flag string
	N    int
}

// CheckCounts refuses, as invalid input (2, nothing written), a count flag
// below 1: the editor would otherwise take 0 attempts for its default.
func CheckCounts(cs ...Count) error {
	for _, c := range cs {
		if err := flagnum.InRange(c.Flag, int64(c.N), 1, math.MaxInt32); err != nil {
			return cmdutil.UsageError("%v", err)
		}
	}
	return nil
}

// WithStore runs fn with the selected Store and maps its errors to exit codes.
func WithStore(c *cobra.Command, f *cmdutil.Factory, fn func(ctx context.Context, st inventory.Store) error) error {
	ctx := c.Context()
	st, done, err := f.InventoryStore(ctx)
	if err != nil {
		return cmdutil.StoreError(err)
	}
	defer done()
	return cmdutil.StoreError(fn(ctx, st))
}

// WithProvider is withStore for a command about provider ref (uuid or name).
func WithProvider(c *cobra.Command, f *cmdutil.Factory, ref string, fn func(ctx context.Context, st inventory.Store, p inventory.Provider) error) error {
	return WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
		p, err := inventory.Resolve(ctx, st, ref)
		if err != nil {
			return err
		}
		return fn(ctx, st, p)
	})
}

// NewCmdCreateName builds `create CUSTOM_NAME` of trait and resource-class:
// create does a PUT that leaves an existing name as it is and, like
// osc-placement's trait create and resource class create (cliff Commands
// returning nothing), prints nothing; --changes prints the name and
// whether this run created it.
func NewCmdCreateName(f *cmdutil.Factory, noun, short, long string, create func(ctx context.Context, st inventory.Store, name string) (created bool, err error)) *cobra.Command {
	var changes bool
	c := &cobra.Command{
		Use:   "create CUSTOM_NAME",
		Short: short,
		Long: long + " Like osc's " + noun + " create it prints nothing; --changes prints the name and\n" +
			"outcome (created, or exists when it was there already).\n\n" + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
				created, err := create(ctx, st, args[0])
				if err != nil || !changes {
					return err
				}
				outcome := "exists"
				if created {
					outcome = "created"
				}
				return f.Write(output.Record([]string{"name", "outcome"}, args[0], outcome), nil)
			})
		},
	}
	c.Flags().BoolVar(&changes, "changes", false, "print the name and outcome (created or exists) instead of nothing, as osc prints")
	return c
}

// Package allocation holds `rpctl allocation` show, set and unset.
package allocation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// consumerPlacement is what the allocation commands need of Placement, on
// either backend: GET and PUT /allocations/{consumer} (claims.Placement)
// and DELETE.
type consumerPlacement struct {
	claims.Placement
	release func(ctx context.Context, consumer string) (bool, error)
	// consumerType: the consumer_type column is shown, as osc shows it
	// from microversion 1.38 (the database backend always has it).
	consumerType bool
}

func withConsumerPlacement(c *cobra.Command, f *cmdutil.Factory, fn func(ctx context.Context, p consumerPlacement) error) error {
	ctx := c.Context()
	if f.UsePlacementAPI() {
		client, err := f.PlacementClient(ctx)
		if err != nil {
			return cmdutil.StoreError(err)
		}
		cl := placementclient.Claims{C: client, ConsumerType: claims.DefaultConsumerType}
		return allocationError(fn(ctx, consumerPlacement{Placement: cl, release: cl.Release, consumerType: client.Microversion().AtLeast(38)}))
	}
	dbs, err := f.Databases(ctx, storage.NeedPlacement, 0)
	if err != nil {
		return err
	}
	defer dbs.Close()
	return allocationError(fn(ctx, consumerPlacement{
		Placement:    &placementdb.ClaimsPlacement{DB: dbs.Placement},
		release:      placementdb.ClaimsLedger{DB: dbs.Placement}.Release,
		consumerType: true,
	}))
}

// allocationError gives the allocation commands the store commands' codes.
func allocationError(err error) error {
	var we *claims.WriteError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &we) && we.Conflict:
		return &cmdutil.ExitError{Code: cmdutil.ExitStoreIncomplete, Err: err}
	case errors.As(err, &we), errors.Is(err, claims.ErrBadInput):
		return &cmdutil.ExitError{Code: cmdutil.ExitStoreRefused, Err: err}
	}
	return cmdutil.StoreError(err)
}

// NewCmdAllocation builds `rpctl allocation`, osc's resource provider
// allocation commands.
func NewCmdAllocation(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "allocation",
		Short: "Show, set, unset and delete a consumer's allocations (osc's resource provider allocation)",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newCmdAllocationShow(f), newCmdAllocationSet(f), newCmdAllocationUnset(f), newCmdAllocationDelete(f))
	return c
}

// checkConsumer refuses a consumer that is not a uuid and gives the
// canonical form (lower case) of one that is: every spelling of a uuid is
// one consumer, on either backend, as in claims create.
func checkConsumer(consumer string) (string, error) {
	canonical, ok := candidates.CanonicalUUID(consumer)
	if !ok {
		return "", fmt.Errorf("%w: consumer %q is not a uuid", claims.ErrBadInput, consumer)
	}
	return canonical, nil
}

// allocationRows are osc's: one row per provider, with consumer_type from
// microversion 1.38.
func allocationRows(a *claims.Allocations, consumerType bool) output.Rows {
	rows := output.Rows{Headers: []string{"resource_provider", "generation", "resources", "project_id", "user_id"}}
	if consumerType {
		rows.Headers = append(rows.Headers, "consumer_type")
	}
	if a == nil {
		return rows
	}
	for _, rp := range inOrder(a.Providers, a.Allocations) {
		pa := a.Allocations[rp]
		res := pyResources{res: pa.Resources, order: inOrder(pa.Classes, pa.Resources)}
		cells := []any{rp, pa.Generation, output.Cell{Text: res.String(), Value: res}, a.ProjectID, a.UserID}
		if consumerType {
			cells = append(cells, a.ConsumerType)
		}
		rows.Add(cells...)
	}
	return rows
}

func newCmdAllocationShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show CONSUMER",
		Short: "Show a consumer's allocations, one row per provider (GET /allocations/{consumer})",
		Long: `Show a consumer's allocations: provider, its generation, the resources, project and user,
and (from Placement microversion 1.38, and always from the database) the consumer type,
"unknown" for a consumer written without one.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			consumer, err := checkConsumer(args[0])
			if err != nil {
				return allocationError(err)
			}
			return withConsumerPlacement(c, f, func(ctx context.Context, p consumerPlacement) error {
				got, err := p.ConsumerAllocations(ctx, []string{consumer})
				if err != nil {
					return err
				}
				return f.Write(allocationRows(got[consumer], p.consumerType), nil)
			})
		},
	}
}

func newCmdAllocationSet(f *cmdutil.Factory) *cobra.Command {
	var allocs []string
	var project, user, ctype string
	c := &cobra.Command{
		Use:   "set CONSUMER --allocation rp=UUID,CLASS=N,... [--project-id P --user-id U] [--consumer-type T]",
		Short: "Replace a consumer's allocations (PUT /allocations/{consumer}), as osc's resource provider allocation set",
		Long: `Replace every allocation of CONSUMER with the --allocation parts (repeatable, one per
provider), consumer-generation checked: read, then written with the generation read
(Placement's rules: capacity, min/max unit, step size). --project-id and --user-id are
required for a new consumer and default to the existing consumer's. --consumer-type
(Placement 1.38) defaults to the existing consumer's type, else INSTANCE; below
microversion 1.38 the API keeps the consumer's type and takes none.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			consumer, err := checkConsumer(args[0])
			if err != nil {
				return allocationError(err)
			}
			want := map[string]claims.ProviderAllocation{}
			for _, s := range allocs {
				rp, res, err := claims.ParseAllocation(s)
				if err != nil {
					return allocationError(err)
				}
				for rc, n := range want[rp].Resources {
					res[rc] += n
				}
				want[rp] = claims.ProviderAllocation{Resources: res}
			}
			if len(want) == 0 {
				return allocationError(fmt.Errorf("%w: give at least one --allocation rp=UUID,CLASS=N", claims.ErrBadInput))
			}
			if c.Flags().Changed("consumer-type") {
				if err := claims.CheckConsumerType(ctype); err != nil {
					return allocationError(err)
				}
			}
			return withConsumerPlacement(c, f, func(ctx context.Context, p consumerPlacement) error {
				got, err := p.ConsumerAllocations(ctx, []string{consumer})
				if err != nil {
					return err
				}
				a := claims.Allocations{ProjectID: project, UserID: user, ConsumerType: ctype}
				if cur := got[consumer]; cur != nil {
					a.ConsumerGeneration = cur.ConsumerGeneration
					a.ProjectID, a.UserID = orCurrent(project, cur.ProjectID), orCurrent(user, cur.UserID)
					a.ConsumerType = orCurrent(ctype, cur.ConsumerType)
				}
				if a.ConsumerType == "" || a.ConsumerType == claims.UnknownConsumerType {
					a.ConsumerType = claims.DefaultConsumerType
				}
				if a.ProjectID == "" || a.UserID == "" {
					return fmt.Errorf("%w: a new consumer needs --project-id and --user-id", claims.ErrBadInput)
				}
				a.Allocations = want
				return putAndShow(ctx, f, p, consumer, a)
			})
		},
	}
	c.Flags().StringArrayVar(&allocs, "allocation", nil, "rp=UUID,CLASS=N,… (repeatable: one per provider)")
	c.Flags().StringVar(&project, "project-id", "", "the consumer's project (required for a new consumer)")
	c.Flags().StringVar(&user, "user-id", "", "the consumer's user (required for a new consumer)")
	c.Flags().StringVar(&ctype, "consumer-type", "", "the consumer's type, e.g. INSTANCE or MIGRATION (Placement 1.38; default: the consumer's, else INSTANCE)")
	return c
}

// putAndShow writes the consumer's allocation (PUT, generation checked)
// and prints what Placement then holds.
func putAndShow(ctx context.Context, f *cmdutil.Factory, p consumerPlacement, consumer string, a claims.Allocations) error {
	if _, err := p.PutAllocations(ctx, []claims.Write{{Consumer: consumer, Alloc: a}}); err != nil {
		return err
	}
	got, err := p.ConsumerAllocations(ctx, []string{consumer})
	if err != nil {
		return err
	}
	return f.Write(allocationRows(got[consumer], p.consumerType), nil)
}

// orCurrent is the flag's value when given, else the current one.
func orCurrent(flag, cur string) string {
	if flag != "" {
		return flag
	}
	return cur
}

func newCmdAllocationUnset(f *cmdutil.Factory) *cobra.Command {
	var providers, classes []string
	c := &cobra.Command{
		Use:   "unset CONSUMER [--provider UUID]... [--resource-class CLASS]...",
		Short: "Remove some of a consumer's allocations, as osc's resource provider allocation unset",
		Long: `Remove the consumer's allocations on the --provider providers (all of them without
--provider) of the --resource-class classes (all without --resource-class), generation
checked; what remains is written back (PUT), or the consumer goes when nothing remains
(DELETE). Naming a provider or class the consumer does not hold is refused.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			consumer, err := checkConsumer(args[0])
			if err != nil {
				return allocationError(err)
			}
			return withConsumerPlacement(c, f, func(ctx context.Context, p consumerPlacement) error {
				got, err := p.ConsumerAllocations(ctx, []string{consumer})
				if err != nil {
					return err
				}
				cur := got[consumer]
				if cur == nil {
					return fmt.Errorf("%w: consumer %s holds no allocation", claims.ErrBadInput, consumer)
				}
				var provs []string
				for _, rp := range providers {
					if u, ok := candidates.CanonicalUUID(rp); ok {
						rp = u
					}
					provs = append(provs, rp)
				}
				rest, err := claims.Unset(*cur, provs, classes)
				if err != nil {
					return err
				}
				if len(rest.Allocations) == 0 {
					if _, err := p.release(ctx, consumer); err != nil {
						return err
					}
					return f.Write(allocationRows(nil, p.consumerType), nil)
				}
				return putAndShow(ctx, f, p, consumer, rest)
			})
		},
	}
	c.Flags().StringArrayVar(&providers, "provider", nil, "a provider uuid to remove the allocations from (repeatable)")
	c.Flags().StringArrayVar(&classes, "resource-class", nil, "a class to remove (repeatable)")
	return c
}

// newCmdAllocationDelete builds `rpctl allocation delete CONSUMER`, osc's
// resource provider allocation delete.
func newCmdAllocationDelete(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "delete CONSUMER",
		Short: "Delete every allocation of a consumer (DELETE /allocations/{consumer}), as osc's resource provider allocation delete",
		Long: `Delete every allocation of CONSUMER, and its consumer record, in one transaction, as
Placement's DELETE /allocations/{consumer} does (no generation is checked or changed), as
osc's resource provider allocation delete; like osc it prints nothing. A consumer holding
no allocation is Placement's "No allocations for consumer '...'" (404: exit 2).

claims release does the same delete with nova-manage's exit codes (3 when the consumer
holds nothing, 127 for bad input) and a notice; this command has the store commands' codes.

` + cmdutil.OSCExitCodes + "\n\n" + cmdutil.StoreExitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			consumer, err := checkConsumer(args[0])
			if err != nil {
				return allocationError(err)
			}
			return withConsumerPlacement(c, f, func(ctx context.Context, p consumerPlacement) error {
				deleted, err := p.release(ctx, consumer)
				if err != nil {
					return err
				}
				if !deleted {
					return inventory.Errorf(inventory.ErrNotFound, "", "No allocations for consumer '%s'", consumer)
				}
				return nil
			})
		},
	}
}

// inOrder are m's keys in the order Placement answered them (order, when
// it names every key), else sorted.
func inOrder[V any](order []string, m map[string]V) []string {
	if len(order) == len(m) && !slices.ContainsFunc(order, func(k string) bool { _, ok := m[k]; return !ok }) {
		return order
	}
	return slices.Sorted(maps.Keys(m))
}

// pyResources prints as osc prints a provider's resources, in Placement's
// order: Python's str of the dict ({'VCPU': 4, 'MEMORY_MB': 2048}) in
// table, value and csv, and an object in json and yaml.
type pyResources struct {
	res   map[string]int64
	order []string
}

func (r pyResources) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, rc := range r.order {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "'%s': %d", rc, r.res[rc])
	}
	b.WriteByte('}')
	return b.String()
}

// MarshalJSON is the object in Placement's order, as osc's json keeps it.
func (r pyResources) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, rc := range r.order {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(rc)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), strconv.FormatInt(r.res[rc], 10)...)
	}
	return append(b, '}'), nil
}

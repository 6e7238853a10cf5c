package claims

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// ClaimsCreateOptions are the flags of `rpctl claims create`.
type ClaimsCreateOptions struct {
	Consumer, Project, User string
	Resources, Flavor       string
	Host                    string
	Attempts                int
	MaxSteps                int64
}

// NewCmdClaimsCreate builds `rpctl claims create`.
func NewCmdClaimsCreate(f *cmdutil.Factory) *cobra.Command {
	o := &ClaimsCreateOptions{}
	c := &cobra.Command{
		Use:   "create --consumer UUID --project P --user U (--resources CLASS:N,… | --flavor NAME) [--host H]",
		Short: "Claim resources for a new consumer: pick a candidate with the built-in Placement core, write it atomically",
		Long: `A two-phase claim, on the Placement database (or, with --os-endpoint/--os-cloud, through
the Placement API: phase one is then Placement's own GET /allocation_candidates and phase
two its PUT /allocations/{consumer}, consumer_type INSTANCE at 1.38+). Phase one reads the database into the
built-in Placement core (rpctl candidates) and picks one of GET /allocation_candidates'
answers for --resources (or the resources Nova would request for --flavor: VCPU or PCPU,
MEMORY_MB, DISK_GB = root + ephemeral + swap, resources:CLASS=N extra specs), at random
(through the API: among the first 8 Placement returns) so that concurrent claims spread; --host restricts it to the tree of the
compute node with that host or hypervisor_hostname. Phase two writes the allocation exactly
as PUT /allocations/{consumer} with consumer_generation null does, in one transaction: the
consumer must be new, the providers are locked, capacity (and min_unit, max_unit,
step_size) is checked against what is allocated at that moment, the providers' and the
consumer's generations go up. When a concurrent claim took the room first, the claim is
retried from phase one (--attempts); it never over-commits a provider.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return claimsExit(runClaimsCreate(c.Context(), f, o))
		},
	}
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: 0, Meaning: "claimed (the table shows what)"},
		cmdutil.ExitCodeRow{Code: claims.ExitRefused, Meaning: "refused: no candidate has the room (the reasons of the first hosts are given), every attempt lost the room to a concurrent claim, or the consumer already exists"},
		cmdutil.ExitCodeRow{Code: claims.ExitBadInput, Meaning: "invalid input (missing or malformed flag, unknown flavor or host)" + claimsForbiddenRow},
		cmdutil.SearchExitCodes()[0], cmdutil.SearchExitCodes()[1],
	)
	fl := c.Flags()
	fl.StringVar(&o.Consumer, "consumer", "", "consumer uuid (an instance's, usually); must not hold allocations yet")
	fl.StringVar(&o.Project, "project", "", "project id of the consumer")
	fl.StringVar(&o.User, "user", "", "user id of the consumer")
	fl.StringVar(&o.Resources, "resources", "", "resources to claim, CLASS:N,… (Placement's syntax)")
	fl.StringVar(&o.Flavor, "flavor", "", "claim what Nova requests for this flavor (name or flavorid, from the API database)")
	fl.StringVar(&o.Host, "host", "", "claim on this compute node (host or hypervisor_hostname)")
	fl.IntVar(&o.Attempts, "attempts", 10, "how often to pick again when a concurrent claim took the room")
	cmdutil.AddMaxStepsFlag(fl, &o.MaxSteps)
	return c
}

func runClaimsCreate(ctx context.Context, f *cmdutil.Factory, o *ClaimsCreateOptions) error {
	// Configuration and database problems come before the flags' (255).
	if _, err := f.Options(); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{claims.ErrBadInput}, args...)...)
	}
	api := f.UsePlacementAPI()
	var need storage.Need
	if !api {
		need = storage.NeedPlacement
	}
	if o.Flavor != "" {
		need |= storage.NeedAPI
	}
	if o.Host != "" {
		need |= storage.NeedCells
	}
	dbs, err := f.Databases(ctx, need, 0)
	if err != nil {
		return err
	}
	defer dbs.Close()
	switch {
	case o.Consumer == "" || o.Project == "" || o.User == "":
		return bad("--consumer, --project and --user are required")
	case !candidates.UUIDLike(o.Consumer):
		return bad("--consumer %q is not a uuid", o.Consumer)
	case (o.Resources == "") == (o.Flavor == ""):
		return bad("give exactly one of --resources and --flavor")
	case o.Attempts < 1:
		return bad("--attempts must be at least 1")
	}
	// Placement's form: the undashed or upper-case spelling of a uuid is the
	// same consumer.
	consumer, _ := candidates.CanonicalUUID(o.Consumer)
	req := claims.CreateRequest{Consumer: consumer, Project: o.Project, User: o.User, Host: o.Host}
	if o.Flavor != "" {
		list, err := apidb.ListFlavors(ctx, dbs.API, o.Flavor)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return bad("--flavor %s: no such flavor in the API database", o.Flavor)
		}
		fl := list[0]
		if req.Resources, err = claims.Resources(claims.Flavor{Name: fl.Name, VCPUs: fl.VCPUs, MemoryMB: fl.MemoryMB, RootGB: fl.RootGB,
			EphemeralGB: fl.EphemeralGB, Swap: fl.Swap, ExtraSpecs: fl.ExtraSpecs}, false); err != nil {
			return bad("--flavor %s: %v", o.Flavor, err)
		}
	} else if req.Resources, err = claims.ParseResources(o.Resources); err != nil {
		return err
	}
	cr := claims.Creator{
		Placement: &placementdb.ClaimsPlacement{DB: dbs.Placement},
		Picker: claims.CorePicker{Model: func(ctx context.Context) (*candidates.Model, error) {
			return placementdb.LoadPlacement(ctx, dbs.Placement)
		}, Bounds: cmdutil.SearchBounds(o.MaxSteps)},
		Nodes: func(ctx context.Context) ([]claims.NodeRef, error) {
			var out []claims.NodeRef
			for _, v := range shared.ClaimsCells[claims.CellView](dbs.Cells) {
				n, err := v.ComputeNodes(ctx)
				if err != nil {
					return nil, err
				}
				out = append(out, n...)
			}
			return out, nil
		},
		Attempts: o.Attempts,
	}
	if api {
		client, err := f.PlacementClient(ctx)
		if err != nil {
			return err
		}
		cr.Placement, cr.Picker = placementclient.Claims{C: client, ConsumerType: "INSTANCE"}, placementclient.Claims{C: client}
	}
	got, err := cr.Create(ctx, req)
	var refused *claims.RefusedError
	if errors.As(err, &refused) {
		return &cmdutil.ExitError{Code: claims.ExitRefused, Err: fmt.Errorf("claim for consumer %s refused: %s", o.Consumer, refused.Reason)}
	}
	if err != nil {
		return cmdutil.SearchError(err, cmdutil.ClaimHint)
	}
	rows := output.Rows{Headers: []string{"consumer", "provider", "resource_class", "amount", "used_after", "capacity"}}
	for _, p := range got.Parts {
		rows.Add(got.Consumer, output.Cell{Text: p.ProviderName, Value: p.ProviderUUID}, p.ResourceClass, p.Amount, p.UsedAfter, p.Capacity)
	}
	if f.IO.Verbose {
		fmt.Fprintf(f.IO.ErrOut, "claimed on %s after %d attempt(s)\n", got.Root, got.Attempts)
	}
	return f.Write(rows, nil)
}

package claims

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
)

// NewCmdClaimsList builds `rpctl claims list`.
func NewCmdClaimsList(f *cmdutil.Factory) *cobra.Command {
	o := claims.ListOptions{}
	c := &cobra.Command{
		Use:   "list [--host H] [--provider P] [--consumer UUID] [--project P]… [--orphans [--expiry 300s]]",
		Short: "Every consumer's allocations per provider, with what Nova says about the consumer",
		Long: `One row per consumer and provider: the classes and amounts held, what the consumer is
(nova_type: instance, migration or unknown to every cell: Nova's view, not Placement's
consumer_type, which allocation show prints), its project and user, its age
(Placement's consumer created_at), and what Nova says about it on that provider's node (nova):
  active on this node  a live instance whose host/node is the provider's compute node
  on another node      a live instance on some other node
  migrating            an instance or migration with an in-progress move from or to the node
  deleted              the instance is deleted
  unknown              no cell knows the uuid (or it is a finished migration)
orphan says whether claims audit would call the allocation orphaned (Nova's rule, --expiry).

Filters: --host (host or hypervisor_hostname of the provider's compute node), --provider
(uuid or name), --consumer, --project (repeatable), --orphans.

With --os-endpoint/--os-cloud Placement is read through its API (GET /resource_providers,
GET /resource_providers/{uuid}/allocations, GET /allocations/{consumer} for project, user
and age); the API shows no consumer created_at, so the age is then the time since the
consumer's allocations were last written (Last-Modified).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return claimsExit(runClaimsList(c, f, o))
		},
	}
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: 0, Meaning: "listed (also when nothing matches)"},
		cmdutil.ExitCodeRow{Code: claims.ExitBadInput, Meaning: "invalid input (--consumer not a uuid, --expiry)" + claimsForbiddenRow},
	)
	fl := c.Flags()
	fl.StringVar(&o.Host, "host", "", "only providers of this compute node (host or hypervisor_hostname)")
	fl.StringVar(&o.Provider, "provider", "", "only this provider (uuid or name)")
	fl.StringVar(&o.Consumer, "consumer", "", "only this consumer (uuid)")
	fl.StringArrayVar(&o.Projects, "project", nil, "only consumers of this project (repeatable)")
	fl.BoolVar(&o.Orphans, "orphans", false, "only allocations claims audit would call orphaned")
	fl.DurationVar(&o.Expiry, "expiry", 0, "consumers younger than this are not orphans (default none, as claims audit and Nova)")
	return c
}

func runClaimsList(c *cobra.Command, f *cmdutil.Factory, o claims.ListOptions) error {
	if err := shared.CheckExpiry(o.Expiry); err != nil {
		return err
	}
	if o.Consumer != "" && !candidates.UUIDLike(o.Consumer) {
		// A typo would otherwise match nothing and exit 0.
		return fmt.Errorf("%w: --consumer %q is not a uuid", claims.ErrBadInput, o.Consumer)
	}
	o.Now = time.Now()
	var entries []claims.Entry
	err := shared.WithClaimsView(c.Context(), f, func(ledger claims.Ledger, cells []claims.CellView) (err error) {
		entries, err = claims.List(c.Context(), ledger, cells, o)
		return err
	})
	if err != nil {
		return err
	}
	rows := output.Rows{Headers: []string{"consumer", "nova_type", "project", "user", "provider", "host", "resources", "age", "nova", "orphan"}}
	// Typed cells: the table shows names and durations, json/yaml/csv and
	// sorting see the uuid, the seconds and the map.
	for _, e := range entries {
		age := o.Now.Sub(e.CreatedAt).Round(time.Second)
		host := e.Node
		if e.Host != "" && e.Host != e.Node {
			host = e.Host + "/" + e.Node
		}
		provider := e.ProviderName
		if provider == "" {
			provider = e.ProviderUUID
		}
		rows.Add(e.Consumer, e.Type, e.Project, e.User, output.Cell{Text: provider, Value: e.ProviderUUID}, host,
			output.Cell{Text: formatResources(e.Resources), Value: e.Resources},
			output.Cell{Text: age.String(), Value: int64(age / time.Second)}, e.Nova,
			output.Cell{Text: strconv.FormatBool(e.Orphan), Value: e.Orphan})
	}
	return f.Write(rows, nil)
}

package claims

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/metrics"
)

// ClaimsAuditOptions are the flags of `rpctl claims audit`.
type ClaimsAuditOptions struct {
	Delete   bool
	Expiry   time.Duration
	Provider string
}

// claimsExit wraps an error of a claims subcommand into nova-manage's codes:
// the operator's input 127 (credentials Placement refuses, 401 or 403,
// included: the same kind the inventory commands map to their 2), anything
// else unexpected 255.
func claimsExit(err error) error {
	if err == nil {
		return nil
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) {
		return err
	}
	switch {
	case errors.Is(err, claims.ErrBadInput):
		return &cmdutil.ExitError{Code: claims.ExitBadInput, Err: errors.New(strings.TrimPrefix(err.Error(), claims.ErrBadInput.Error()+": "))}
	case errors.Is(err, inventory.ErrForbidden):
		return &cmdutil.ExitError{Code: claims.ExitBadInput, Err: err}
	}
	return &cmdutil.ExitError{Code: claims.ExitUnexpectedError, Err: err}
}

// claimsForbiddenRow is the 127 row's addition in every claims command's
// table: the credentials are the operator's input too.
const claimsForbiddenRow = ", or credentials Placement refused (401/403, through the API)"

// NewCmdClaimsAudit builds `rpctl claims audit`. runF, when not nil, gets
// the parsed options instead of the command running (as NewCmdClaimsHeal).
func NewCmdClaimsAudit(f *cmdutil.Factory, runF func(*ClaimsAuditOptions) error) *cobra.Command {
	o := &ClaimsAuditOptions{}
	c := &cobra.Command{
		Use:   "audit [--delete] [--expiry 300s] [--provider UUID | --resource_provider UUID]",
		Short: "Find (and --delete) allocations no instance or in-progress migration owns, as nova-manage placement audit",
		Long: `Nova 26's nova-manage placement audit, straight on the databases (or through the Placement
API, below). Walking the resource providers in id order (the API's listing order), an
allocation holding any of VCPU, MEMORY_MB, DISK_GB,
VGPU, NET_BW_EGR_KILOBIT_PER_SEC, NET_BW_IGR_KILOBIT_PER_SEC, PCPU or
MEM_ENCRYPTION_CONTEXT is orphaned when its consumer is neither a live instance on the
node of the provider's root (its compute node) nor an in-progress migration from or to
that node. By default there is no expiry, as in Nova: a consumer created a second ago
counts. --expiry D (beyond Nova) keeps consumers younger than D (Placement's consumer
created_at; the allocation's for a consumer without a record) and a summary line on
standard error counts the orphans found and those kept as young. A provider whose
root is no compute node (a sharing provider, say) has only orphans: Nova's rule.

--delete removes each orphan as Nova does through the API, one transaction per consumer:
a consumer that also holds other providers keeps those (their generations and the
consumer's go up by one, as a PUT does); otherwise its allocations and its consumer
record go. A run interrupted at any point and run again ends as an uninterrupted run.

With --os-endpoint/--os-cloud Placement is read and changed through its API with Nova's own
calls: GET /resource_providers, GET /resource_providers/{uuid}/allocations in that order,
and for a delete GET /allocations/{consumer}, then PUT of the rest (consumer_generation
checked, microversion 1.28) or DELETE /allocations/{consumer}. For --expiry each
consumer's allocations are read once more (GET /allocations/{consumer}): the API has no
consumer created_at, so the age is the time since its allocations were last written
(Last-Modified), which is never older than created_at.

Output: one row per orphan (consumer, nova_type: instance, migration or unknown to every
cell, Nova's view and not Placement's consumer_type, provider, resources, age, result);
--verbose prints nova-manage's --verbose messages on standard error; -f prometheus prints
the orphans per provider and class as Prometheus metrics (text format 0.0.4), as rpctl
exporter serves them. The exit codes are nova-manage placement audit's.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return claimsExit(runClaimsAudit(c, f, o))
		},
	}
	cmdutil.OfferFormats(c, output.Prometheus)
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: 0, Meaning: "no orphaned allocation"},
		cmdutil.ExitCodeRow{Code: 1, Meaning: "a delete failed (the run stops after that provider, as Nova's does)"},
		cmdutil.ExitCodeRow{Code: 3, Meaning: "orphaned allocations found"},
		cmdutil.ExitCodeRow{Code: 4, Meaning: "orphaned allocations found and deleted"},
		cmdutil.ExitCodeRow{Code: claims.ExitBadInput, Meaning: "invalid input (unknown --provider, negative --expiry)" + claimsForbiddenRow},
	)
	c.Flags().BoolVar(&o.Delete, "delete", false, "delete the orphaned allocations found")
	c.Flags().DurationVar(&o.Expiry, "expiry", 0, "an allocation whose consumer is younger than this is kept, not an orphan (default none, as Nova)")
	c.Flags().StringVar(&o.Provider, "provider", "", "audit only this resource provider (uuid)")
	c.Flags().StringVar(&o.Provider, "resource_provider", "", "the same as --provider (nova-manage's name)")
	c.MarkFlagsMutuallyExclusive("provider", "resource_provider")
	return c
}

func runClaimsAudit(c *cobra.Command, f *cmdutil.Factory, o *ClaimsAuditOptions) error {
	if err := shared.CheckExpiry(o.Expiry); err != nil {
		return err
	}
	opts := claims.AuditOptions{Provider: o.Provider, Expiry: o.Expiry, Delete: o.Delete, Now: time.Now()}
	// A bar with rate and ETA on a terminal, one line at the end (and
	// every few seconds) otherwise (issue 35); the verbose lines clear it
	// first, and so does what follows the audit.
	what := "audit"
	if o.Delete {
		what = "audit --delete"
	}
	prog := cmdutil.NewProgressOf(f.IO.ErrOut, f.IO.IsStderrTTY(), what, "allocations")
	opts.Counted = prog.UpdateDone
	if f.Verbose {
		log := prog.Before(f.IO.ErrOut)
		opts.Progress = func(s string) { fmt.Fprintln(log, s) }
	}
	var res *claims.AuditResult
	err := shared.WithClaimsView(c.Context(), f, func(ledger claims.Ledger, cells []claims.CellView) (err error) {
		res, err = claims.Audit(c.Context(), ledger, cells, opts)
		return err
	})
	prog.Clear()
	if err != nil && res == nil {
		return err
	}
	rows := output.Rows{Headers: []string{"consumer", "nova_type", "provider", "resources", "age", "result"}}
	for _, or := range res.Orphans {
		result := "orphaned"
		switch {
		case or.Failed != nil:
			result = "delete failed: " + or.Failed.Error()
		case or.Deleted:
			result = "deleted"
		}
		age := opts.Now.Sub(or.CreatedAt).Round(time.Second)
		rows.Add(or.Consumer, or.Type, or.ProviderUUID, output.Cell{Text: formatResources(or.Resources), Value: or.Resources},
			output.Cell{Text: age.String(), Value: int64(age / time.Second)}, result)
	}
	var werr error
	switch {
	case f.Format == output.Prometheus:
		werr = metrics.WriteText(f.IO.Out, metrics.Audit(res))
	case len(rows.Rows) == 0 && f.Format == output.Table && !f.Output.PrintEmpty:
		// Nothing orphaned: nothing printed, as nova-manage placement
		// audit (not cliff's lone newline for an empty table).
	default:
		werr = f.Write(rows, nil)
	}
	if werr != nil {
		return werr
	}
	if err != nil {
		// Stopped mid-way (a signal): the table is what was done.
		deleted := 0
		for _, or := range res.Orphans {
			if or.Deleted {
				deleted++
			}
		}
		fmt.Fprintf(f.IO.ErrOut, "claims audit stopped after %d orphaned allocations (%d deleted); a re-run carries on\n", len(res.Orphans), deleted)
		return err
	}
	if o.Expiry > 0 {
		// Kept orphans are invisible in the rows: say how many there were.
		fmt.Fprintf(f.IO.ErrOut, "%d orphaned allocation(s), %d kept as younger than --expiry %s\n", len(res.Orphans), len(res.Young), o.Expiry)
	}
	if res.Stopped != "" {
		return &cmdutil.ExitError{Code: claims.AuditDeleteFailed, Err: fmt.Errorf("the Resource Provider %s had problems when deleting allocations. Stopping now. Please fix the problem by hand and run again", res.Stopped)}
	}
	if code := res.Code(o.Delete); code != 0 {
		return cmdutil.Exit(code)
	}
	return nil
}

// formatResources prints resources as CLASS=N,… in class order.
func formatResources(res map[string]int64) string {
	var b strings.Builder
	for i, rc := range claims.SortedClasses(res) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d", rc, res[rc])
	}
	return b.String()
}

// Package claims holds `rpctl claims`: heal, audit, list, create, release,
// snapshot and diff.
package claims

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// claimsSubcommands are the `rpctl claims` subcommands that live in other
// files (claims_*.go).
func claimsSubcommands() []func(*cmdutil.Factory) *cobra.Command {
	return []func(*cmdutil.Factory) *cobra.Command{
		NewCmdClaimsList, NewCmdClaimsSnapshot,
		NewCmdClaimsDiff, NewCmdClaimsCreate, NewCmdClaimsRelease,
	}
}

// NewCmdClaims builds `rpctl claims` and its subcommands.
func NewCmdClaims(f *cmdutil.Factory) *cobra.Command {
	parent := &cobra.Command{
		Use:   "claims",
		Short: "Placement allocations of instances and migrations: heal the missing ones (and more)",
		Long: `A claim is a Placement allocation held by a consumer: an instance, or a migration for the
source side of a move. These commands work straight on the Nova and Placement databases;
heal, audit, create and release also work through the Placement API (--os-endpoint or
--os-cloud), reading only the cell databases.`,
	}
	parent.AddCommand(NewCmdClaimsHeal(f, nil), NewCmdClaimsAudit(f, nil))
	for _, build := range claimsSubcommands() {
		parent.AddCommand(build(f))
	}
	return parent
}

// ClaimsHealOptions are the flags of `rpctl claims heal`.
type ClaimsHealOptions struct {
	DryRun   bool
	MaxCount string // parsed as nova-manage does: not an integer counts as -1
	Cell     string
	Instance string
	Force    bool
	// SkipPortAllocations is nova-manage's --skip-port-allocations: rpctl
	// never heals Neutron port allocations, so it changes nothing.
	SkipPortAllocations bool
}

const claimsHealLong = `Nova 26's nova-manage placement heal_allocations, on the databases: every live instance
(not soft-deleted) that is on a node, in no task state, and has no allocation in Placement
gets one against its compute node's provider, built from its embedded flavor: VCPU (PCPU
for hw:cpu_policy=dedicated, both for mixed), MEMORY_MB, DISK_GB = root_gb + ephemeral_gb +
swap (root_gb left out when it boots from volume), every resources[N]:CLASS=N extra spec
overriding those, hw:pmem namespaces. An instance whose allocation names another project
or user gets those fixed. Migrations' allocations (the source side of a resize or move in
progress) are left alone. --force (with --instance) rebuilds the instance's allocation from
its flavor. Each consumer is written atomically with Placement's own rules: project and user
records, consumer record and generation check, capacity and unit checks, provider and
consumer generations incremented as placement-api increments them. Neutron port
allocations are never healed: rpctl runs as nova-manage's --skip-port-allocations does,
and takes that flag (it changes nothing) so that nova-manage's command line works.

Where the resources go: on a compute node whose provider is alone in its tree and shares
no aggregate with a sharing provider (the flat layout), everything goes on that provider,
exactly as nova-manage writes it. Otherwise (rpctl's nested layout, --shared-storage) the
built-in Placement core places the instance: its flavor's request as "candidates --flavor"
builds it, without traits and root_required (they choose a host; the host is chosen),
searched over the node's tree and the sharing providers of its aggregates, with their
usage (including what this heal wrote). Of the candidates, the one on the fewest providers
wins, then the one whose providers come first in database id order (NUMA cell 0 before
cell 1), then the smaller amounts. An instance with no candidate stops the heal (exit 3)
with the instance, its host, the class that does not fit and what to do. The providers are
read once per heal (through the API: one GET per provider and kind).

With --os-endpoint/--os-token or --os-cloud the allocations are read and written through
the Placement API exactly as nova-manage does: GET /allocations/{consumer} for each
candidate, then PUT /allocations/{consumer} with its consumer_generation, both at
microversion 1.28 (Nova's report client's), one instance after the other; instances,
flavors and compute nodes still come from the cell databases.

Instances are taken oldest first (created_at), cell by cell. Without --max-count every
instance is looked at; with it, nova-manage's batch rules apply (a batch may heal past it).
--cell takes a cell name (or its uuid); --instance finds the cell through the API
database's instance_mappings. --verbose prints nova-manage's progress lines on stderr.

Exit codes are nova-manage heal_allocations' (5, 6, 7 are its Neutron port failures;
rpctl does not touch ports).`

// NewCmdClaimsHeal builds `rpctl claims heal`. runF, when not nil, gets the parsed
// options instead of the command running (how the flags are tested, as the
// GitHub CLI's NewCmd constructors).
func NewCmdClaimsHeal(f *cmdutil.Factory, runF func(*ClaimsHealOptions) error) *cobra.Command {
	o := &ClaimsHealOptions{}
	c := &cobra.Command{
		Use:   "heal",
		Short: "Create the missing allocations of instances (nova-manage placement heal_allocations)",
		Long:  claimsHealLong,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !c.Flags().Changed("max-count") {
				o.MaxCount = ""
			}
			if runF != nil {
				return runF(o)
			}
			return runClaimsHeal(c.Context(), f, o)
		},
	}
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: claims.ExitHealed, Meaning: "allocations were created or updated"},
		cmdutil.ExitCodeRow{Code: claims.ExitMaxCount, Meaning: "--max-count was reached and more instances may need healing (also after exactly 50 healed in a run without --max-count, as nova-manage)"},
		cmdutil.ExitCodeRow{Code: claims.ExitNoComputeNode, Meaning: "an instance's compute node record was not found"},
		cmdutil.ExitCodeRow{Code: claims.ExitWriteFailed, Meaning: "an allocation could not be written (capacity, unknown provider or class, conflict); with --dry-run, an instance's compute node has no resource provider yet (run migrate inventory first)"},
		cmdutil.ExitCodeRow{Code: claims.ExitNothingToDo, Meaning: "completed, nothing healed (also every other --dry-run, as nova-manage)"},
		cmdutil.ExitCodeRow{Code: claims.ExitUnsupported, Meaning: "an instance has a vGPU or Cyborg device profile request (not healable)"},
		cmdutil.ExitCodeRow{Code: claims.ExitBadInput, Meaning: "invalid input: --max-count not a positive integer, --cell with --instance, --force without --instance, an unmapped instance, an unknown cell" + claimsForbiddenRow},
	)
	fl := c.Flags()
	fl.BoolVar(&o.DryRun, "dry-run", false, "print what would be written and write nothing (exit code 4; 3 when a compute node has no resource provider yet)")
	fl.StringVar(&o.MaxCount, "max-count", "", "heal at most this many instances (default: all, in batches)")
	fl.StringVar(&o.Cell, "cell", "", "only this cell (name, or uuid from cell_mappings)")
	fl.StringVar(&o.Instance, "instance", "", "only this instance (uuid)")
	fl.BoolVar(&o.Force, "force", false, "rebuild the instance's allocation from its flavor even if it has one (needs --instance)")
	fl.BoolVar(&o.SkipPortAllocations, "skip-port-allocations", false, "nova-manage's flag, taken as is: rpctl never heals Neutron port allocations, with or without it")
	return c
}

// badInput ends a command with code 127 and nova-manage's one-line message.
func badInput(f *cmdutil.Factory, msg string) error {
	fmt.Fprintln(f.IO.ErrOut, msg)
	return cmdutil.Exit(claims.ExitBadInput)
}

// unexpected ends a command with code 255, unless the error is one of the
// kinds claimsExit maps (credentials Placement refuses: 127).
func unexpected(err error) error { return claimsExit(err) }

func runClaimsHeal(ctx context.Context, f *cmdutil.Factory, o *ClaimsHealOptions) error {
	if o.Instance != "" && o.Cell != "" {
		return badInput(f, "The --cell and --instance options are mutually exclusive.")
	}
	if o.Force && o.Instance == "" {
		return badInput(f, "The --instance flag is required when using --force flag.")
	}
	hopts := claims.HealOptions{DryRun: o.DryRun, Instance: o.Instance, Force: o.Force, DryRunOut: f.IO.Out}
	if o.MaxCount != "" && o.Instance == "" {
		n, err := strconv.Atoi(strings.TrimSpace(o.MaxCount))
		if err != nil || n < 1 {
			return badInput(f, "Must supply a positive integer for --max-count.")
		}
		hopts.MaxCount = n
	}
	// A bar with rate and ETA on a terminal, a line every few seconds
	// otherwise (issue 35); the verbose lines clear it first.
	prog := cmdutil.NewProgressOf(f.IO.ErrOut, f.IO.IsStderrTTY(), "heal", "instances")
	hopts.Progress = prog.UpdateDone
	if f.IO.Verbose {
		hopts.Log = prog.Before(f.IO.ErrOut)
	}
	api := f.UsePlacementAPI()
	need := storage.NeedCells | storage.NeedPlacement
	if api {
		need = storage.NeedCells
	}
	dbs, err := f.Databases(ctx, need, storage.NeedAPI)
	if err != nil {
		return unexpected(err)
	}
	defer dbs.Close()
	cells, err := healCells(ctx, f, dbs, o)
	if err != nil {
		return err
	}
	h := claims.Healer{Cells: shared.ClaimsCells[claims.Cell](cells), Placement: &placementdb.ClaimsPlacement{DB: dbs.Placement}}
	if api {
		// Through the API: Nova's own calls, GET and PUT
		// /allocations/{consumer} at its report client's microversion.
		client, err := f.PlacementClient(ctx)
		if err != nil {
			return unexpected(err)
		}
		h.Placement = placementclient.Claims{C: client, Microversion: &placementclient.NovaHealVersion}
	}
	res, err := h.Heal(ctx, hopts)
	prog.Clear() // what follows (an error, the table) starts on a clean line
	if werr := writeHealResult(f, res); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		// The table above is what was written before the error; say so,
		// since the error may be a write whose outcome is unknown. With
		// nothing written the error's own line says it all (a 403 on the
		// first GET, say).
		var created, updated int
		for _, c := range res.Cells {
			created, updated = created+c.Created, updated+c.Updated
		}
		if created+updated > 0 {
			fmt.Fprintf(f.IO.ErrOut, "claims heal stopped: %d instances healed before the error (%d created, %d updated); a re-run carries on\n", created+updated, created, updated)
		}
	}
	if err != nil {
		return unexpected(err)
	}
	if res.Message != "" {
		fmt.Fprintln(f.IO.ErrOut, res.Message)
	}
	if res.NoProvider > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%d instances cannot be healed yet: the compute nodes of %s have no resource provider (not listed above). Run \"rpctl migrate inventory\" first; the real run would stop at the first of them (exit 3).\n",
			res.NoProvider, shared.FewNames(res.NoProviderHosts, 5))
	}
	if res.Code != 0 {
		return cmdutil.Exit(res.Code)
	}
	return nil
}

// healCells picks the cells a heal works on: --instance's mapped cell,
// --cell, or all of them.
func healCells(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *ClaimsHealOptions) ([]*storage.DB, error) {
	switch {
	case o.Instance != "" && dbs.API != nil && !dbs.Embedded:
		name, cellUUID, found, err := apidb.InstanceCell(ctx, dbs.API, o.Instance)
		if err != nil {
			return nil, unexpected(err)
		}
		if !found {
			return nil, badInput(f, fmt.Sprintf(`Unable to find cell for instance %s, is it mapped? Try running "nova-manage cell_v2 verify_instance" or "nova-manage cell_v2 map_instances".`, o.Instance))
		}
		if cellUUID == "" {
			return nil, unexpected(fmt.Errorf("instance %s is mapped to no cell (never scheduled)", o.Instance))
		}
		c, found, err := cmdutil.CellByRef(ctx, f, dbs, cellUUID)
		if err != nil {
			return nil, unexpected(err)
		}
		if !found {
			return nil, unexpected(fmt.Errorf("instance %s is mapped to cell %q (%s), whose database is not among the cells opened", o.Instance, name, cellUUID))
		}
		return []*storage.DB{c}, nil
	case o.Cell != "":
		c, found, err := cmdutil.CellByRef(ctx, f, dbs, o.Cell)
		if err != nil {
			return nil, unexpected(err)
		}
		if found {
			return []*storage.DB{c}, nil
		}
		return nil, badInput(f, fmt.Sprintf("Cell with uuid %s was not found.", o.Cell))
	}
	return dbs.Cells, nil
}

func writeHealResult(f *cmdutil.Factory, res claims.HealResult) error {
	rows := output.Rows{Headers: []string{"cell", "candidates", "created", "updated", "up_to_date", "in_task_state", "not_on_host", "would_heal"}}
	for _, c := range res.Cells {
		rows.Rows = append(rows.Rows, []string{c.Cell, fmt.Sprint(c.Candidates), fmt.Sprint(c.Created), fmt.Sprint(c.Updated),
			fmt.Sprint(c.UpToDate), fmt.Sprint(c.InTask), fmt.Sprint(c.NoHost), fmt.Sprint(c.DryRun)})
	}
	return f.Write(rows, res)
}

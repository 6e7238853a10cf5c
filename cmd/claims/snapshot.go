package claims

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/storage/claimsnap"
)

// NewCmdClaimsSnapshot builds `rpctl claims snapshot`.
func NewCmdClaimsSnapshot(f *cmdutil.Factory) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "snapshot --out FILE",
		Short: "Write every consumer's claim to a claim store file (SQLite) to keep and compare with claims diff",
		Long: fmt.Sprintf(`Write every consumer's allocation on every provider to FILE, a SQLite file in the
persistent-resource-claims design's layout: a claims table (id, host, node, instance_uuid,
vcpus, memory_mb, disk_gb, pci, resize_target, created_at; since layout version 2 also
provider_uuid and resources, the full JSON map of classes) and a one-row version table
claims_version (table_name = 'claims', version). This rpctl writes layout version %d.

host and node are those of the provider's compute node (empty for a provider that is none);
pci lists PCI_DEVICE, SRIOV_NET_VF, CUSTOM_SRIOV_NET_PF and CUSTOM_PCI_* as CLASS=N,...;
resize_target is 1 for an instance's claim on the destination of its in-progress migration.
The file is written beside FILE and renamed to it: it appears whole or not at all. An existing
FILE is refused (exit 2) unless --force; a database or config file rpctl reads, always.
With --os-endpoint/--os-cloud Placement is read through its API (as claims list does;
created_at is then when the consumer's allocations were last written).`, claimsnap.Current),
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return claimsExit(runClaimsSnapshot(c, f, out))
		},
	}
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: 0, Meaning: "written"},
		cmdutil.ExitCodeRow{Code: cmdutil.ExitFailed, Meaning: "--out names an existing file (without --force), a file rpctl reads, no regular file (a directory, device, FIFO or socket, --force or not), or a path whose directory is missing: nothing written"},
		cmdutil.ExitCodeRow{Code: claims.ExitBadInput, Meaning: "invalid input" + claimsForbiddenRow},
	)
	c.Flags().StringVar(&out, "out", "", "claim store file to write (an existing file only with --force)")
	cmdutil.MarkPathFlags(c.Flags(), "output", "out")
	return c
}

func runClaimsSnapshot(c *cobra.Command, f *cmdutil.Factory, out string) error {
	// Configuration and database problems come before the flags' (255).
	if _, err := f.Options(); err != nil {
		return err
	}
	ctx := c.Context()
	policy := f.OutputPolicy(c)
	// Refused before the read, so that a long read does not end in it.
	if err := policy.Check("--out", out); err != nil {
		return cmdutil.FileSafetyExit(err)
	}
	var snap []claims.Claim
	err := shared.WithClaimsView(ctx, f, func(ledger claims.Ledger, cells []claims.CellView) (err error) {
		if out == "" {
			return fmt.Errorf("%w: --out FILE is required", claims.ErrBadInput)
		}
		snap, err = claims.Snapshot(ctx, ledger, cells)
		return err
	})
	if err != nil {
		return err
	}
	err = policy.Write("--out", out, func(tmp string) error { return claimsnap.Write(ctx, tmp, snap) })
	if err != nil {
		return cmdutil.FileSafetyExit(err)
	}
	consumers := map[string]bool{}
	for _, s := range snap {
		consumers[s.InstanceUUID] = true
	}
	fmt.Fprintf(f.NoticeOut(), "Wrote %d claims of %d consumers to %s (layout version %d).\n", len(snap), len(consumers), out, claimsnap.Current)
	return nil
}

package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/providerconfig"
)

// ProviderApplyOptions are the flags of `rpctl provider apply`.
type ProviderApplyOptions struct {
	Files  []string
	DryRun bool
}

// AttachProviderApply adds `apply` under the `provider` command, creating
// that parent when no other file of this package has.
func AttachProviderApply(root *cobra.Command, f *cmdutil.Factory) {
	for _, c := range root.Commands() {
		if c.Name() == "provider" {
			c.AddCommand(NewCmdProviderApply(f))
			return
		}
	}
	parent := &cobra.Command{Use: "provider", Short: "Resource providers: apply Nova provider config files"}
	parent.AddCommand(NewCmdProviderApply(f))
	root.AddCommand(parent)
}

// NewCmdProviderApply builds `rpctl provider apply`.
func NewCmdProviderApply(f *cmdutil.Factory) *cobra.Command {
	o := &ProviderApplyOptions{}
	c := &cobra.Command{
		Use:   "apply -f FILE|DIR [-f ...]",
		Short: "Apply Nova provider config files (provider.yaml): custom inventories and traits",
		Long: `Read Nova's provider config files (schema 1.0, the format of
[compute]provider_config_location) and apply them to Placement as nova-compute would:
create the missing custom resource classes and traits, then add or update the named
inventories and add the named traits of each provider — its inventories in one
generation-checked write, its traits in another; other classes and traits are kept.

Providers are identified by uuid, by name, or by uuid '$COMPUTE_NODE' (every root provider
with the COMPUTE_NODE trait that no other entry names). A directory gives its *.yaml
files in name order. Validation is Nova's (only CUSTOM_ classes and traits, required
fields and types, a provider named twice across the files is an error), and classes Nova
or 'rpctl migrate inventory' manage are refused; every error names the file, the provider
entry and the field, and nothing is written. Entries naming providers Placement does not
have are skipped with a warning, as Nova does. Applying the same files again changes
nothing.

--dry-run prints every change (class or trait, before -> after) and writes nothing.

Works on the Placement database, or through the Placement API when --os-cloud or
--os-endpoint select it, like the other provider commands.`,
		Example: `  rpctl --db cloud.db provider apply -f /etc/nova/provider_config/ --dry-run
  rpctl --placement-db mysql+pymysql://placement:pw@db/placement provider apply -f gpu.yaml -f fpga.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runProviderApply(c.Context(), f, o) },
	}
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: cmdutil.ExitOK, Meaning: "applied (or nothing to change)"},
		cmdutil.ExitCodeRow{Code: cmdutil.ExitMore, Meaning: "some provider could not be written (a generation conflict through every retry, or Placement refused it; the others are written)"},
		cmdutil.ExitCodeRow{Code: cmdutil.ExitFailed, Meaning: "invalid files (nothing written)"},
	)
	c.Flags().StringArrayVar(&o.Files, "file", nil, "a provider config file, or a directory of *.yaml files (repeatable; -f FILE works too)")
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "print every change and write nothing")
	cmdutil.MarkPathFlags(c.Flags(), "input", "file")
	return c
}

// ProviderApplyArgs lets `provider apply -f provider.yaml` mean --file, as
// kubectl-style apply commands have it, although -f is rpctl's global
// --format: after "provider apply", a -f whose value is not an output
// format is a file. (`-f json` still picks the format; a file named like a
// format needs --file.)
func ProviderApplyArgs(args []string) []string {
	provider := -1
	for i, a := range args {
		if a == "provider" && provider < 0 {
			provider = i
		}
		if a == "apply" && provider >= 0 && provider < i {
			out := slices.Clone(args)
			for k := i + 1; k+1 < len(out); k++ {
				if out[k] == "-f" && output.ValidateFormat(out[k+1]) != nil {
					out[k] = "--file"
				}
			}
			return out
		}
	}
	return args
}

func runProviderApply(ctx context.Context, f *cmdutil.Factory, o *ProviderApplyOptions) error {
	if len(o.Files) == 0 {
		return cmdutil.UsageError("give at least one -f FILE or -f DIR")
	}
	cfg, err := providerconfig.Load(o.Files)
	if ae := (*providerconfig.ArgError)(nil); errors.As(err, &ae) {
		return cmdutil.UsageError("-f %s: %v (give provider config files, or directories of *.yaml files)", ae.Arg, ae.Err)
	}
	var errs providerconfig.Errors
	if errors.As(err, &errs) {
		for _, e := range errs[:len(errs)-1] {
			fmt.Fprintln(f.IO.ErrOut, e)
		}
		return cmdutil.UsageError("%s", errs[len(errs)-1])
	}
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(f.IO.ErrOut, "warning:", w)
	}
	// The database, or the Placement API when --os-cloud/--os-endpoint
	// select it, as for the other provider commands.
	st, done, err := f.InventoryStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	pl, err := providerconfig.MakePlan(ctx, st, cfg)
	if errors.As(err, &errs) {
		for _, e := range errs[:len(errs)-1] {
			fmt.Fprintln(f.IO.ErrOut, e)
		}
		return cmdutil.UsageError("%s", errs[len(errs)-1])
	}
	if err != nil {
		return cmdutil.StoreError(err)
	}
	for _, s := range pl.Skipped {
		fmt.Fprintln(f.IO.ErrOut, "warning:", s)
	}
	if o.DryRun {
		return writeProviderPlan(f, pl, nil)
	}
	res, err := providerconfig.Apply(ctx, st, pl)
	if err != nil {
		return cmdutil.StoreError(err)
	}
	if err := writeProviderPlan(f, pl, res); err != nil {
		return err
	}
	for _, fail := range res.Failed {
		fmt.Fprintln(f.IO.ErrOut, fail)
	}
	if len(res.Failed) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitStoreIncomplete, Err: fmt.Errorf("%d provider(s) could not be written", len(res.Failed))}
	}
	return nil
}

type providerChangeJSON struct {
	Provider string               `json:"provider"`
	UUID     string               `json:"uuid"`
	Entry    string               `json:"entry"`
	Kind     string               `json:"kind"`
	Name     string               `json:"name"`
	Action   string               `json:"action"`
	Before   *inventory.Inventory `json:"before"`
	After    *inventory.Inventory `json:"after"`
}

func invText(v *inventory.Inventory) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("total=%d reserved=%d min=%d max=%d step=%d ratio=%s", v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize,
		strconv.FormatFloat(float64(float32(v.AllocationRatio)), 'g', -1, 32))
}

// writeProviderPlan prints every change; res is nil for --dry-run.
func writeProviderPlan(f *cmdutil.Factory, pl *providerconfig.Plan, res *providerconfig.Result) error {
	rows := output.Rows{Headers: []string{"provider", "uuid", "kind", "name", "action", "before", "after"}}
	js := []providerChangeJSON{}
	for _, c := range pl.Changes {
		before, after := invText(c.Before), invText(c.After)
		if c.Kind == "trait" {
			before, after = "-", "-"
		}
		rows.Rows = append(rows.Rows, []string{c.Provider.Name, c.Provider.UUID, c.Kind, c.Name, c.Action, before, after})
		js = append(js, providerChangeJSON{c.Provider.Name, c.Provider.UUID, c.Entry, c.Kind, c.Name, c.Action, c.Before, c.After})
	}
	if f.Format == output.JSON || f.Format == output.YAML {
		return f.Write(rows, js)
	}
	if len(rows.Rows) > 0 {
		if err := f.Write(rows, nil); err != nil {
			return err
		}
	}
	out := f.NoticeOut()
	if res == nil {
		fmt.Fprintf(out, "Dry run: %d provider(s); would create %d resource class(es) %v and %d trait(s) %v; nothing written.\n",
			len(pl.Targets), len(pl.NewClasses), pl.NewClasses, len(pl.NewTraits), pl.NewTraits)
		return nil
	}
	fmt.Fprintf(out, "%d provider(s) written, %d unchanged, %d failed; created %d resource class(es), %d trait(s).\n",
		res.Written, res.Unchanged, len(res.Failed), len(res.ClassesCreated), len(res.TraitsCreated))
	return nil
}

package shared

import (
	"context"
	"fmt"
	"github.com/rpctl/rpctl/internal/release"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/metrics"
	"github.com/rpctl/rpctl/status"
)

// StatusFamilies are the checks' results with the drifted inventories and
// the instances without allocations they found, one by one. Each finding
// needs every database it reads: when one could not be opened or read, its
// families are left out (a 0 would read as "none found") and the errors
// returned, once each.
func StatusFamilies(ctx context.Context, env *status.Env, rep status.Report) ([]*metrics.Family, []error) {
	fams := metrics.Status(rep.Results)
	var errs []error
	seen := map[string]bool{}
	add := func(es []error) {
		for _, e := range es {
			if e != nil && !seen[e.Error()] {
				seen[e.Error()] = true
				errs = append(errs, e)
			}
		}
	}
	add(env.CellErrs)
	add([]error{env.PlacementErr})
	if drifts, derrs := env.Drifts(ctx); len(derrs) == 0 && len(env.CellErrs) == 0 && env.PlacementErr == nil {
		fams = append(fams, metrics.Drift(drifts)...)
	} else {
		add(derrs)
	}
	if missing, merrs := env.MissingAllocations(ctx); len(merrs) == 0 && len(env.CellErrs) == 0 && env.PlacementErr == nil {
		fams = append(fams, metrics.Missing(missing)...)
	} else {
		add(merrs)
	}
	return fams, errs
}

// StatusCheckOptions choose and parametrise the upgrade checks. rpctl
// status and rpctl exporter take the same flags into it and run the checks
// through RunStatus, so that the exporter's rpctl_status_check_result is
// `rpctl status`'s, check by check: one place sets up the checks' Env.
type StatusCheckOptions struct {
	Checks            []string
	MinServiceVersion int64
	// ComputeConfigDir is --compute-config-dir, as migrate inventory's.
	ComputeConfigDir string
	Release          string
}

// AddStatusCheckFlags adds the flags of StatusCheckOptions; what says
// whose checks they are ("rpctl status", "the exporter's").
func AddStatusCheckFlags(fs *pflag.FlagSet, o *StatusCheckOptions) {
	fs.StringArrayVar(&o.Checks, "check", nil, `run only this check (repeatable; name as in the table, any case, or e.g. "compute-node-uuids"; or a tool's: nova-status, placement-status, rpctl)`)
	fs.Int64Var(&o.MinServiceVersion, "min-service-version", status.DefaultMinServiceVersion,
		"oldest nova-conductor/nova-osapi_compute service version that passes (37 = Stein, the initial-allocation-ratios release); older nova-compute services warn")
	fs.StringVar(&o.ComputeConfigDir, "compute-config-dir", "", "for the Compute Node Inventories check, as for rpctl migrate inventory: "+ComputeConfigDirUsage)
	cmdutil.MarkPathFlags(fs, "input", "compute-config-dir")
	AddReleaseFlag(fs, &o.Release, "whose nova-status and placement-status checks run, or auto: the release the cell databases' alembic head and control services' versions say, the head winning when they differ (printed on standard error with its witness; --nova-release or [rpctl] nova_release names it instead)")
}

// Validate checks the flags alone, before any config file is read: a bad
// --min-service-version, --release or --check name.
func (o StatusCheckOptions) Validate() error {
	if o.MinServiceVersion < 1 {
		return fmt.Errorf("--min-service-version must be a positive service version, got %d", o.MinServiceVersion)
	}
	if !o.detectRelease() {
		if _, err := ParseRelease(o.Release); err != nil {
			return err
		}
	}
	_, err := status.Select(status.Checks(&status.Env{}), o.Checks)
	return err
}

// PrepareStatus checks o and reads the config files, before anything
// connects (a typo costs no connection): the Env the checks will share and
// the checks o selects. Its errors are the command's usage errors.
func PrepareStatus(f *cmdutil.Factory, o StatusCheckOptions) (*status.Env, []status.Check, error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	opts, err := f.Options()
	if err != nil {
		return nil, nil, err
	}
	rel, _ := ParseRelease(o.Release)
	env := &status.Env{Options: opts, MinServiceVersion: o.MinServiceVersion, Release: rel}
	checks, err := status.Select(status.Checks(env), o.Checks)
	if err != nil {
		return nil, nil, err
	}
	// The nova.conf the compute nodes' nova-compute reads, as migrate
	// inventory reads it: a bad --compute-config-dir is a usage error; a
	// nova.conf option the plan cannot use fails only the check that plans.
	if err := StatusCompute(f, env, o.ComputeConfigDir); err != nil {
		return nil, nil, err
	}
	return env, checks, nil
}

// StatusRun is one run of the upgrade checks: the Env they read (its
// findings feed -f prometheus) and their report. Close it when done.
type StatusRun struct {
	Env    *status.Env
	Report status.Report
	wired  *StatusWiring
}

// Close closes the databases the checks opened.
func (r *StatusRun) Close() { r.wired.Close() }

// RunStatus runs the checks o selects, as rpctl status and the exporter
// both do: PrepareStatus, WireStatus, then every check. Its error is one
// of the flags or config files (a database or API that cannot be read is
// the failure of the checks that need it, in the report).
func RunStatus(ctx context.Context, f *cmdutil.Factory, o StatusCheckOptions) (*StatusRun, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	src, err := f.Sources()
	if err != nil {
		return nil, err
	}
	// The release is said on standard error (the report stays the
	// tools'): the one the operator names (--nova-release, [rpctl]
	// nova_release) wins over detection, which --release auto asks for.
	named, by, err := f.NovaRelease()
	if err != nil {
		return nil, err
	}
	switch {
	case o.detectRelease() && named != "":
		fmt.Fprintf(f.IO.ErrOut, "release %s, %s (named by %s; not detected)\n", named, status.WitnessOperator, by)
		o.Release = string(named)
	case o.detectRelease():
		d, err := DetectRelease(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("--release auto: %w", err)
		}
		fmt.Fprintf(f.IO.ErrOut, "release %s, detected from the %s: %s\n", d.Release, d.Witness, d.Seen)
		o.Release = string(d.Release)
	case named != "" && release.Name(o.Release) == named:
		fmt.Fprintf(f.IO.ErrOut, "release %s, %s (%s)\n", named, status.WitnessOperator, by)
	}
	env, checks, err := PrepareStatus(f, o)
	if err != nil {
		return nil, err
	}
	wired, err := WireStatus(ctx, env, src)
	if err != nil {
		return nil, err
	}
	env.Prefetch(ctx, checks)
	return &StatusRun{Env: env, Report: status.Run(ctx, checks), wired: wired}, nil
}

// detectRelease tells --release auto: the release is read from the cell
// databases (DetectRelease) once the flags are checked.
func (o StatusCheckOptions) detectRelease() bool {
	return strings.EqualFold(strings.TrimSpace(o.Release), "auto")
}

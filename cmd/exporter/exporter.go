// Package exporter holds `rpctl exporter`, run by rpctl-exporter.
package exporter

import (
	"context"
	"fmt"
	"net"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/capacity"
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/metrics"
)

// ServeMetrics serves an exporter's metrics. The rpctl-exporter binary sets
// it (to exporter.Serve) before running the commands; in rpctl itself it is
// nil and `rpctl exporter` execs rpctl-exporter, so that no other command
// links client_golang, whose package init registers collectors.
var ServeMetrics func(ctx context.Context, o metrics.ServeOptions) error

// ExporterBinary is the program `rpctl exporter` runs.
const ExporterBinary = "rpctl-exporter"

// ExporterOptions are the flags of `rpctl exporter`.
type ExporterOptions struct {
	Listen   string
	Interval time.Duration
	Expiry   time.Duration
	Flavors  []string
	Mix      string
	// StatusCheckOptions are rpctl status's flags that choose and
	// parametrise the checks: the same flags, the same checks.
	shared.StatusCheckOptions
	shared.FlavorOptions
}

// exporterNoFormat is why the exporter takes no -f, in its help and in the
// refusal.
const exporterNoFormat = "the exporter takes no -f: it prints no rows, it serves its metrics over HTTP (GET /metrics, always Prometheus' text format)"

// NewCmdExporter builds `rpctl exporter`. runF, when not nil, gets the parsed
// options instead of the command running (how the flags are tested, as the
// GitHub CLI's NewCmd constructors).
func NewCmdExporter(f *cmdutil.Factory, runF func(*ExporterOptions) error) *cobra.Command {
	o := &ExporterOptions{}
	c := &cobra.Command{
		Use:   "exporter --listen 127.0.0.1:9xxx [--interval 60s]",
		Short: "Serve capacity per flavor, upgrade checks and claim audits as Prometheus metrics",
		Long: `Serve /metrics (Prometheus' client_golang) and /healthz on --listen. In the background, every
--interval, rpctl collects what these commands print with -f prometheus:

  capacity       every public flavor (or --flavor), mode independent and mode pack (--mix),
                 with os-capacity's metric names and rpctl's exact counts, and every
                 inventory's used, reserved and capacity
  status         every upgrade check's result, the drifted inventories and the instances
                 without allocations: the checks rpctl status runs, through its own code,
                 chosen and set by the same flags (--check, --release,
                 --min-service-version, --compute-config-dir), so that each
                 rpctl_status_check_result is what rpctl status --json says
  claims audit   orphaned allocations per provider and class (never deletes)

The three run side by side. A scrape never computes: it gets the last collection's page,
rendered and gzipped once when the collection ended. A part that fails (its database
unreachable, say) is left out of that collection, counted in
rpctl_exporter_collect_errors{part} and logged; so is, alone, a flavor whose search fails
(a ceiling: too many request groups), and a status finding (drift, missing allocations)
whose database could not be read: what was not measured is missing, never published as 0.
rpctl_exporter_last_success_timestamp_seconds is when the last collection without an error
ended. /healthz answers 200 once a collection has been published. A keep-alive connection
idle for 90 s is closed. SIGTERM or SIGINT stop it cleanly (exit 0); SIGHUP is ignored (the
config files are read once: restart the exporter to read changed ones).

The databases are given as for the other commands. Which file gives what: nova.conf gives
the cells and the API database (flavors, aggregate names, the checks' Nova rows) and, with
[placement] credentials (Keystone, or endpoint_override), the Placement API; placement.conf
gives Placement's database. With nova.conf alone every part reads Placement through its
API: capacity (every provider's inventories, usages, traits and aggregates, provider by
provider, and for openstack_project_usage every provider's allocations and one GET
/allocations/{consumer} per consumer for its project, the reads the audit makes), the
checks (as rpctl status does: placement-status's two checks cannot run, their results say
so) and the audit.
Bad config files, flags or flavors are refused at start (exit 2, or 255 for a config file
that cannot be read); a database that cannot be read yet is not: the exporter warns once
and serves, and each collection counts the error until the database answers.
The server is the rpctl-exporter program, installed beside rpctl: rpctl runs it, so that
no other command pays for the Prometheus library's start-up.

` + exporterNoFormat + `.`,
		Example: `  rpctl --config-file /etc/nova/nova.conf exporter --listen 127.0.0.1:9465 --interval 60s`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.StatusCheckOptions.Release = o.FlavorOptions.Release // one --release
			if runF != nil {
				return runF(o)
			}
			return runExporter(c.Context(), f, o)
		},
	}
	cmdutil.RefuseFormats(c, exporterNoFormat)
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: cmdutil.ExitOK, Meaning: "served until SIGTERM or SIGINT, then stopped cleanly (a signal before serving gives 130/143)"},
		cmdutil.ExitCodeRow{Code: cmdutil.ExitFailed, Meaning: "invalid input (--listen not HOST:PORT with a port, --interval not positive, --expiry negative, a --release rpctl does not know, a flavor), or the listener failed; a value that is no duration at all is a usage error (255), as for every flag"},
	)
	fl := c.Flags()
	fl.StringVar(&o.Listen, "listen", "127.0.0.1:9465", "host:port to serve /metrics and /healthz on")
	fl.DurationVar(&o.Interval, "interval", time.Minute, "how often to collect (in the background)")
	fl.DurationVar(&o.Expiry, "expiry", 300*time.Second, "claims audit: an allocation whose consumer is younger than this is never an orphan")
	fl.StringArrayVar(&o.Flavors, "flavor", nil, "a flavor name, id or JSON/YAML file (repeatable; default: every public flavor)")
	cmdutil.MarkPathFlags(fl, "input", "flavor")
	fl.StringVar(&o.Mix, "mix", "", "the mix of the pack-mode count, FLAVOR=WEIGHT,... (default one of each)")
	// One --release for the flavors' requests and the checks: registered
	// first, so that AddImageFlags and AddStatusCheckFlags leave it alone;
	// runExporter hands its value to the checks.
	shared.AddReleaseFlag(fl, &o.FlavorOptions.Release, "whose Nova builds a flavor's Placement request and whose nova-status and placement-status checks run")
	shared.AddImageFlags(fl, &o.FlavorOptions)
	// The checks' flags are rpctl status's (--check, --release,
	// --min-service-version, --compute-config-dir).
	shared.AddStatusCheckFlags(fl, &o.StatusCheckOptions)
	return c
}

func runExporter(ctx context.Context, f *cmdutil.Factory, o *ExporterOptions) error {
	if o.Interval <= 0 {
		return cmdutil.UsageError("--interval must be positive, got %s", o.Interval)
	}
	if err := shared.CheckExpiry(o.Expiry); err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if err := checkListen(o.Listen); err != nil {
		return err
	}
	// The checks' flags are refused here, as rpctl status refuses them,
	// rather than failing every collection.
	if err := o.StatusCheckOptions.Validate(); err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if o.ComputeConfigDir != "" {
		if _, err := shared.ComputeConfig(f, "", nil, o.ComputeConfigDir); err != nil {
			return cmdutil.UsageError("%v", err)
		}
	}
	if ServeMetrics == nil {
		// What rpctl-exporter would refuse (config, flavors) is refused
		// here, with the codes of every other command.
		if err := prepare(ctx, f, o); err != nil {
			return err
		}
		return execExporter()
	}
	// Listen first: the connections prepareCapacity opens take
	// ephemeral ports, which may include the one asked for.
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return cmdutil.UsageError("--listen %s: %v", o.Listen, err)
	}
	// Bad flags or flavors are the operator's to fix before serving, not
	// a collection error to find in the metrics later.
	if err := prepare(ctx, f, o); err != nil {
		ln.Close()
		return err
	}
	// A daemon outlives its terminal: SIGHUP (a closed session, or a
	// reload some service managers send) does not stop it. It reads its
	// config files once; a restart reads changed ones.
	signal.Ignore(syscall.SIGHUP)
	fmt.Fprintf(f.IO.ErrOut, "rpctl exporter: serving http://%s/metrics every %s\n", ln.Addr(), o.Interval)
	return ServeMetrics(ctx, metrics.ServeOptions{Listener: ln, Interval: o.Interval, Log: f.IO.ErrOut,
		Collect: func(ctx context.Context) metrics.Run { return collectMetrics(ctx, f, o) }})
}

// prepare checks the config files, flags and flavors before serving: what
// is wrong there is refused (the operator's to fix). A database that cannot
// be read yet (down, unreachable, refusing the password) is not: refusing
// to start would only make systemd restart the exporter in a loop and
// leave Prometheus with up=0; it serves, warns once, and every collection
// reports the error (rpctl_exporter_collect_errors) until the database
// answers.
func prepare(ctx context.Context, f *cmdutil.Factory, o *ExporterOptions) error {
	if _, err := f.Options(); err != nil {
		return err
	}
	_, err := shared.PrepareCapacity(ctx, f, o.capacityOptions(capacity.Pack), false)
	if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitUnexpected || ctx.Err() != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "rpctl exporter: warning: %s; serving anyway: each collection reports it until it succeeds\n", sanitize.String(err.Error()))
	return nil
}

// checkListen refuses a --listen that is not host:port with a port: an
// empty address (or port 0) would serve on a random port of every
// interface, one no scraper can be pointed at. ":9465" (every interface)
// must be written out.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return cmdutil.UsageError("--listen %q: want HOST:PORT, e.g. 127.0.0.1:9465 (or :9465 for every interface): %v", addr, err)
	}
	if n, err := net.LookupPort("tcp", port); err != nil || n == 0 {
		return cmdutil.UsageError("--listen %q: want a port (1-65535): port %q would be a random one, which no Prometheus can be pointed at", addr, port)
	}
	return nil
}

func (o *ExporterOptions) capacityOptions(mode capacity.Mode) *shared.CapacityOptions {
	co := &shared.CapacityOptions{Flavors: o.Flavors, Mode: string(mode), FlavorOptions: o.FlavorOptions}
	if mode == capacity.Pack {
		co.Mix = o.Mix
	}
	return co
}

// execExporter replaces this process with rpctl-exporter, same arguments.
func execExporter() error {
	return cmdutil.ExecHelper(ExporterBinary, "rpctl exporter")
}

// collectMetrics is one collection: capacity (both modes), the upgrade
// checks and the claims audit, each on its own so that one failing leaves
// the others' metrics. They run side by side: capacity mostly computes
// while the other two mostly wait on their databases. A part may publish
// some of its families and fail the rest (a flavor whose search fails, a
// cell that cannot be read): each error is counted under its part, and
// what it would have measured is left out, never published as 0.
func collectMetrics(ctx context.Context, f *cmdutil.Factory, o *ExporterOptions) metrics.Run {
	run := metrics.Run{Durations: map[string]time.Duration{}}
	// The Factory reads its config files once, unguarded: read them here,
	// before the parts share it (runExporter has already, normally).
	if _, err := f.Options(); err != nil {
		for _, name := range []string{"capacity", "status", "audit"} {
			run.Errors = append(run.Errors, metrics.PartError{Part: name, Err: err})
		}
		return run
	}
	names := []string{"capacity", "status", "audit"}
	collect := []func() ([]*metrics.Family, []error){
		func() ([]*metrics.Family, []error) { return collectCapacity(ctx, f, o) },
		func() ([]*metrics.Family, []error) { return collectStatus(ctx, f, o.StatusCheckOptions) },
		func() ([]*metrics.Family, []error) {
			opts := claims.AuditOptions{Expiry: o.Expiry, Now: time.Now()}
			var res *claims.AuditResult
			err := shared.WithClaimsView(ctx, f, func(ledger claims.Ledger, cells []claims.CellView) (err error) {
				res, err = claims.Audit(ctx, ledger, cells, opts)
				return err
			})
			if err != nil {
				return nil, []error{err}
			}
			return metrics.Audit(res), nil
		},
	}
	fams := make([][]*metrics.Family, len(names))
	errs := make([][]error, len(names))
	took := make([]time.Duration, len(names))
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() {
			start := time.Now()
			fams[i], errs[i] = collect[i]()
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	// The page keeps the parts' order, whichever ended first.
	for i, name := range names {
		run.Durations[name] = took[i]
		for _, err := range errs[i] {
			run.Errors = append(run.Errors, metrics.PartError{Part: name, Err: err})
		}
		run.Families = append(run.Families, fams[i]...)
	}
	return run
}

// collectCapacity counts both modes on one load of the model and one
// search per flavor. A flavor whose search fails (a ceiling: too many
// request groups, say) is left out of this collection, one error each;
// the other flavors' series and the inventories' usage are published.
func collectCapacity(ctx context.Context, f *cmdutil.Factory, o *ExporterOptions) ([]*metrics.Family, []error) {
	in, err := shared.PrepareCapacity(ctx, f, o.capacityOptions(capacity.Pack), true)
	if err != nil {
		return nil, []error{err}
	}
	plans, kept, failed, err := capacity.SearchEach(ctx, in.Model, in.Reqs, candidates.Options{})
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for _, fe := range failed {
		errs = append(errs, fe)
	}
	var mix []int
	if in.Mix != nil {
		for _, i := range kept {
			mix = append(mix, in.Mix[i])
		}
	}
	if len(kept) == 0 {
		// No flavor to count: the inventories' usage still is.
		return in.Families(), errs
	}
	ind, err := plans.Count(capacity.Options{Mode: capacity.Independent})
	if err != nil {
		return nil, append(errs, err)
	}
	pack, err := plans.Count(capacity.Options{Mode: capacity.Pack, Mix: mix})
	if err != nil {
		return nil, append(errs, err)
	}
	in.Name(ind)
	in.Name(pack)
	return in.Families(ind, pack), errs
}

// collectStatus runs the upgrade checks through rpctl status's own path
// (shared.RunStatus), so that each check's result is the one rpctl status
// gives. A database that cannot be reached is an error of the part (its
// checks say so in their results), and the drift and missing-allocation
// series that would need it are left out rather than published as none.
func collectStatus(ctx context.Context, f *cmdutil.Factory, o shared.StatusCheckOptions) ([]*metrics.Family, []error) {
	run, err := shared.RunStatus(ctx, f, o)
	if err != nil {
		return nil, []error{err}
	}
	defer run.Close()
	return shared.StatusFamilies(ctx, run.Env, run.Report)
}

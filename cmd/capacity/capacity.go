// Package capacity holds `rpctl capacity` (and --plot, drawn by rpctl-chart).
package capacity

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/capacity"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/metrics"
)

// DrawChart draws capacity --plot's chart (chart.Capacity). The rpctl-chart
// binary sets it before running the commands; in rpctl itself it is nil and
// `rpctl capacity --plot` execs rpctl-chart, so that no other command links
// gonum/plot, whose package init loads its fonts (~180 KB, issue 22).
var DrawChart func(path string, res, empty *capacity.Result) error

// ChartBinary is the program `rpctl capacity --plot` runs.
const ChartBinary = "rpctl-chart"

// plotFormat returns the image format --plot's file name asks for.
func plotFormat(path string) (string, error) {
	switch ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext {
	case "png", "svg":
		return ext, nil
	default:
		return "", fmt.Errorf("%q: the chart is written as .png or .svg", path)
	}
}

// NewCmdCapacity builds `rpctl capacity`. runF, when not nil, gets the parsed
// options instead of the command running (how the flags are tested, as the
// GitHub CLI's NewCmd constructors).
func NewCmdCapacity(f *cmdutil.Factory, runF func(*shared.CapacityOptions) error) *cobra.Command {
	o := &shared.CapacityOptions{}
	c := &cobra.Command{
		Use:   "capacity",
		Short: "How many more of each flavor fit, per host, per aggregate and in total",
		Long: `Count how many more instances of each flavor fit, by claiming them one after another
through the built-in Placement core, loaded from the Placement database: allocation ratios,
reserved, min_unit/max_unit/step_size, traits, nested provider trees and sharing providers
decide, as they do for Placement. Each flavor becomes the request Nova 26's scheduler sends
(see 'rpctl candidates --flavor'), including the VCPU fallback query of pinned flavors.

Without --flavor every public, enabled flavor of the API database is counted. A flavor is a
name or id in the API database or a JSON/YAML file (as for candidates --flavor).

  --mode independent   each flavor alone (default): per host, how many fit on that host;
                       per aggregate and in total, the greedy fill of those hosts together
                       (a sharing storage pool is then shared, not counted once per host)
  --mode pack          a greedy fill with a mix of flavors, --mix small=3,large=1 (three
                       small for each large; default one of each) until none fits; per host,
                       what the fill put there

The fill is the scheduler's greedy one: every instance goes to the first candidate the core
returns (hosts in provider id order). Hosts with COMPUTE_STATUS_DISABLED count 0, as Nova's
request filter forbids them.

--plot FILE.png|FILE.svg draws the counts as small multiples, one panel for all hosts and
one per aggregate (by its Nova name when known): a bar per flavor, as long as its share of
what the same hosts would hold empty, labelled with the count. The drawing is done by the
rpctl-chart program installed beside rpctl (rpctl runs it), so that no other command pays
for the plotting library's start-up.

-f json|yaml give the whole result (mode, totals, aggregates, hosts, notes) as one document;
-f csv|value give the table's rows, one column per flavor: every aggregate and the total,
or with --hosts every host (the table prints both).

-f prometheus prints the counts as Prometheus metrics (text format 0.0.4, for node_exporter's
textfile collector): os-capacity's openstack_free_capacity_by_flavor_total and
openstack_free_capacity_hypervisor_by_flavor with rpctl's exact counts, rpctl_capacity_* per
aggregate, and every inventory's used and capacity (os-capacity's
openstack_hypervisor_placement_allocated and _allocatable_capacity) and reserved
(rpctl_placement_reserved); see 'rpctl exporter'.`,
		Example: `  rpctl --db cloud.db capacity
  rpctl --db cloud.db capacity --flavor m1.small --flavor m1.large --hosts
  rpctl --db cloud.db capacity --mode pack --mix m1.small=3,m1.large=1 -f json
  rpctl --db cloud.db capacity --plot capacity.png`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(o)
			}
			return runCapacity(c.Context(), f, o)
		},
	}
	cmdutil.OfferFormats(c, output.Prometheus)
	cmdutil.SetExitCodes(c, append([]cmdutil.ExitCodeRow{
		{Code: cmdutil.ExitOK, Meaning: "counted"},
		{Code: cmdutil.ExitFailed, Meaning: "invalid input (flag, flavor, mix, aggregate); --plot names an existing file (without --force), a file rpctl reads, no regular file (a directory, device, FIFO or socket), or a path whose directory is missing"},
	}, cmdutil.SearchExitCodes()...)...)
	fl := c.Flags()
	cmdutil.AddMaxStepsFlag(fl, &o.MaxSteps)
	fl.StringArrayVar(&o.Flavors, "flavor", nil, "a flavor name, id or JSON/YAML file (repeatable; default: every public flavor)")
	fl.StringVar(&o.Aggregate, "aggregate", "", "only the hosts in this aggregate: its UUID, or a Nova host aggregate's name (API database)")
	fl.StringVar(&o.Mode, "mode", string(capacity.Independent), "independent (each flavor alone) or pack (a greedy fill of --mix)")
	fl.StringVar(&o.Mix, "mix", "", "with --mode pack: FLAVOR=WEIGHT,... e.g. m1.small=3,m1.large=1")
	fl.StringVar(&o.Plot, "plot", "", "also draw the counts per flavor and aggregate (share of the empty cloud) into FILE.png or FILE.svg (an existing file only with --force)")
	cmdutil.MarkPathFlags(fl, "output", "plot")
	cmdutil.MarkPathFlags(fl, "input", "flavor")
	fl.BoolVar(&o.Hosts, "hosts", false, "with -f table: also list every host (JSON always has them)")
	shared.AddImageFlags(fl, &o.FlavorOptions)
	return c
}

func runCapacity(ctx context.Context, f *cmdutil.Factory, o *shared.CapacityOptions) error {
	if o.Plot != "" {
		if _, err := plotFormat(o.Plot); err != nil {
			return cmdutil.UsageError("--plot: %v", err)
		}
		if err := f.OutputPolicy(nil).Check("--plot", o.Plot); err != nil {
			return cmdutil.FileSafetyExit(err)
		}
		if DrawChart == nil {
			// Rpctl-chart counts and draws; nothing is read twice.
			return cmdutil.ExecHelper(ChartBinary, "rpctl capacity --plot")
		}
	}
	in, err := shared.PrepareCapacity(ctx, f, o, f.Format == output.Prometheus)
	if err != nil {
		return err
	}
	if f.IO.Verbose {
		// Printed just before the search, as candidates prints its request:
		// the progress a caller (or a test sending a signal) can wait for.
		fmt.Fprintf(f.IO.ErrOut, "capacity: counting %d flavors (%s)\n", len(in.Reqs), in.Mode)
	}
	res, err := capacity.Count(ctx, in.Model, in.Reqs, capacity.Options{Mode: in.Mode, Mix: in.Mix, Aggregate: in.Aggregate, Bounds: cmdutil.SearchBounds(o.MaxSteps)})
	if err != nil {
		return cmdutil.SearchError(err, cmdutil.CapacityHint)
	}
	in.Name(res)
	if o.Aggregate != "" && len(res.Hosts) == 0 {
		return cmdutil.UsageError("--aggregate %s: no host is in that aggregate", o.Aggregate)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(f.IO.ErrOut, n)
	}
	if f.Format == output.Prometheus {
		err = metrics.WriteText(f.IO.Out, in.Families(res))
	} else {
		err = writeCapacity(f, res, o.Hosts)
	}
	if err != nil {
		return err
	}
	if o.Plot != "" {
		// Each bar is a share of what the same hosts hold empty.
		empty, err := capacity.Count(ctx, in.Model.WithoutUsage(), in.Reqs, capacity.Options{Mode: in.Mode, Mix: in.Mix, Aggregate: in.Aggregate, Bounds: cmdutil.SearchBounds(o.MaxSteps)})
		if err != nil {
			return cmdutil.SearchError(err, cmdutil.CapacityHint)
		}
		// A chart is no secret: created as os.Create would (0o666 less the
		// umask), not private as the temporary file rpctl writes it through.
		policy := f.OutputPolicy(nil)
		policy.Mode = 0o666
		err = policy.Write("--plot", o.Plot, func(tmp string) error { return DrawChart(tmp, res, empty) })
		if err != nil {
			return cmdutil.FileSafetyExit(err)
		}
		if f.Format == output.Table || f.Format == "" {
			fmt.Fprintf(f.IO.Out, "Chart written to %s.\n", o.Plot)
		}
	}
	return nil
}

type capacityJSON struct {
	Mode       string             `json:"mode"`
	Flavors    []string           `json:"flavors"`
	Total      map[string]int64   `json:"total"`
	Aggregates []capacityAggJSON  `json:"aggregates"`
	Hosts      []capacityHostJSON `json:"hosts"`
	Notes      []string           `json:"notes"`
}

type capacityAggJSON struct {
	Aggregate string           `json:"aggregate"`
	Name      string           `json:"name"`
	Hosts     int              `json:"hosts"`
	Free      map[string]int64 `json:"free"`
}

type capacityHostJSON struct {
	Host         string           `json:"host"`
	ProviderUUID string           `json:"provider_uuid"`
	Aggregates   []string         `json:"aggregates"`
	Free         map[string]int64 `json:"free"`
}

func perFlavor(names []string, v []int64) map[string]int64 {
	m := make(map[string]int64, len(names))
	for i, n := range names {
		m[n] = v[i]
	}
	return m
}

// writeCapacity prints the aggregates and the total (and with --hosts every
// host) as tables, one column per flavor; -f json/yaml give everything.
func writeCapacity(f *cmdutil.Factory, res *capacity.Result, hosts bool) error {
	if f.Format == output.JSON || f.Format == output.YAML {
		v := capacityJSON{Mode: string(res.Mode), Flavors: res.Flavors, Total: perFlavor(res.Flavors, res.Total),
			Aggregates: []capacityAggJSON{}, Hosts: []capacityHostJSON{}, Notes: res.Notes}
		if v.Notes == nil {
			v.Notes = []string{}
		}
		for _, a := range res.Aggregates {
			v.Aggregates = append(v.Aggregates, capacityAggJSON{a.UUID, a.Name, a.Hosts, perFlavor(res.Flavors, a.Free)})
		}
		for _, h := range res.Hosts {
			aggs := h.Aggregates
			if aggs == nil {
				aggs = []string{}
			}
			v.Hosts = append(v.Hosts, capacityHostJSON{h.Name, h.UUID, aggs, perFlavor(res.Flavors, h.Free)})
		}
		return f.Write(output.Rows{}, v)
	}
	if f.Format == output.CSV || f.Format == output.Value {
		return f.Write(capacityRows(res, hosts), nil)
	}
	out := f.IO.Out
	num := func(v []int64) []string {
		s := make([]string, len(v))
		for i, n := range v {
			s[i] = strconv.FormatInt(n, 10)
		}
		return s
	}
	what := "free slots (each flavor alone)"
	if res.Mode == capacity.Pack {
		what = "instances placed by a greedy fill of the mix"
	}
	if hosts {
		rows := output.Rows{Headers: append([]string{"host"}, res.Flavors...), Align: output.AlignRight}
		for _, h := range res.Hosts {
			rows.Rows = append(rows.Rows, append([]string{h.Name}, num(h.Free)...))
		}
		fmt.Fprintf(out, "Per host, %s:\n", what)
		if err := output.RenderTable(out, rows); err != nil {
			return err
		}
	}
	rows := output.Rows{Headers: append([]string{"aggregate", "name", "hosts"}, res.Flavors...), Align: output.AlignRight}
	for _, a := range res.Aggregates {
		rows.Rows = append(rows.Rows, append([]string{a.UUID, a.Name, strconv.Itoa(a.Hosts)}, num(a.Free)...))
	}
	rows.Rows = append(rows.Rows, append([]string{"total", "", strconv.Itoa(len(res.Hosts))}, num(res.Total)...))
	fmt.Fprintf(out, "Per aggregate and in total, %s:\n", what)
	return output.RenderTable(out, rows)
}

// capacityRows are capacity's rows for -f csv and value, one column per
// flavor: every host with --hosts, else every aggregate and the total (the
// tables' rows, typed).
func capacityRows(res *capacity.Result, hosts bool) output.Rows {
	cells := func(head []any, v []int64) []any {
		for _, n := range v {
			head = append(head, n)
		}
		return head
	}
	if hosts {
		rows := output.Rows{Headers: append([]string{"host", "provider_uuid"}, res.Flavors...)}
		for _, h := range res.Hosts {
			rows.Add(cells([]any{h.Name, h.UUID}, h.Free)...)
		}
		return rows
	}
	rows := output.Rows{Headers: append([]string{"aggregate", "name", "hosts"}, res.Flavors...)}
	for _, a := range res.Aggregates {
		rows.Add(cells([]any{a.UUID, a.Name, a.Hosts}, a.Free)...)
	}
	rows.Add(cells([]any{"total", "", len(res.Hosts)}, res.Total)...)
	return rows
}

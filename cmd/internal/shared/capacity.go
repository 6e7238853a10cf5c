package shared

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/capacity"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/metrics"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// CapacityOptions are the flags of `rpctl capacity`.
type CapacityOptions struct {
	Flavors   []string
	Aggregate string
	Mode      string
	Mix       string
	Plot      string
	Hosts     bool
	MaxSteps  int64
	FlavorOptions
}

// parseMix reads "a=3,b=1" keeping the order written.
func parseMix(s string) ([]string, map[string]int, error) {
	var names []string
	w := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		k, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil || k < 0 {
			return nil, nil, fmt.Errorf("--mix %q: want FLAVOR=WEIGHT,... with whole weights ≥ 0", part)
		}
		if _, dup := w[name]; dup {
			return nil, nil, fmt.Errorf("--mix names %s twice", name)
		}
		names = append(names, name)
		w[name] = k
	}
	return names, w, nil
}

// capacityInput is what a count needs, read from the databases: the
// flavors' requests, the Placement model and what Nova knows of flavors
// and aggregates.
type capacityInput struct {
	Reqs      []capacity.Flavor
	Mix       []int
	Mode      capacity.Mode
	Aggregate string
	Model     *candidates.Model
	nova      metrics.Nova
	projects  []metrics.ProjectUsage
}

// Name gives the result's aggregates their Nova names.
func (in *capacityInput) Name(res *capacity.Result) {
	for i := range res.Aggregates {
		res.Aggregates[i].Name = in.nova.AggregateNames[res.Aggregates[i].UUID]
	}
}

// Families are the metrics of the results and of Placement's usage.
func (in *capacityInput) Families(res ...*capacity.Result) []*metrics.Family {
	fams := metrics.Capacity(res, in.nova)
	fams = append(fams, metrics.Usage(in.Model)...)
	return append(fams, metrics.Projects(in.projects)...)
}

// PrepareCapacity checks the flags, builds the flavors' requests and loads
// the model (and with usage, the usage per project).
func PrepareCapacity(ctx context.Context, f *cmdutil.Factory, o *CapacityOptions, usage bool) (*capacityInput, error) {
	in := &capacityInput{Mode: capacity.Mode(o.Mode)}
	if in.Mode != capacity.Independent && in.Mode != capacity.Pack {
		return nil, cmdutil.UsageError("invalid --mode %q: choose independent or pack", o.Mode)
	}
	var mixNames []string
	var weights map[string]int
	if o.Mix != "" {
		if in.Mode != capacity.Pack {
			return nil, cmdutil.UsageError("--mix needs --mode pack")
		}
		var err error
		if mixNames, weights, err = parseMix(o.Mix); err != nil {
			return nil, cmdutil.UsageError("%v", err)
		}
	}
	args := o.Flavors
	if len(args) == 0 {
		args = mixNames
	}
	fls, err := loadCapacityFlavors(ctx, f, args)
	if err != nil {
		return nil, err
	}
	if weights != nil {
		in.Mix = make([]int, len(fls))
		known := map[string]bool{}
		for i, fl := range fls {
			in.Mix[i] = weights[fl.Name]
			known[fl.Name] = true
		}
		for _, n := range mixNames {
			if !known[n] {
				return nil, cmdutil.UsageError("--mix names %s, which is not among the flavors counted", n)
			}
		}
	}
	img, err := o.LoadImage(nil)
	if err != nil {
		return nil, err
	}
	in.nova.Public = map[string]bool{}
	for i := range fls {
		cf, err := capacityFlavor(f, &fls[i], img, &o.FlavorOptions)
		if err != nil {
			if len(o.Flavors) == 0 {
				// Counting every flavor: one that Nova refuses is left
				// out, not the whole report.
				fmt.Fprintf(f.IO.ErrOut, "%v (left out)\n", err)
				if in.Mix != nil {
					in.Mix = append(in.Mix[:len(in.Reqs)], in.Mix[len(in.Reqs)+1:]...)
				}
				continue
			}
			return nil, err
		}
		in.Reqs = append(in.Reqs, cf)
		in.nova.Public[fls[i].Name] = fls[i].IsPublic
	}
	if len(in.Reqs) == 0 {
		return nil, cmdutil.UsageError("no flavor to count")
	}
	// A controller's nova.conf alone ([placement] credentials, no
	// Placement database): the model is read through the Placement API,
	// as candidates --compare reads it (issue 34).
	api := f.UsePlacementAPI()
	need := storage.NeedPlacement
	if api {
		need = 0
	}
	dbs, err := f.Databases(ctx, need, storage.NeedAPI)
	if err != nil {
		return nil, err
	}
	defer dbs.Close()
	if api {
		if err := in.loadThroughAPI(ctx, f, usage); err != nil {
			return nil, err
		}
	} else {
		if in.Model, err = placementdb.LoadPlacement(ctx, dbs.Placement); err != nil {
			return nil, err
		}
	}
	if usage && !api {
		us, err := placementdb.ProjectUsages(ctx, dbs.Placement)
		if err != nil {
			return nil, err
		}
		for _, u := range us {
			in.projects = append(in.projects, metrics.ProjectUsage{ProjectID: u.Project, Class: u.Class, Used: u.Used})
		}
	}
	// Nova's host aggregates are Placement aggregates of the same UUID;
	// their names live in the API database, when it has them.
	in.nova.AggregateNames = map[string]string{}
	if dbs.API != nil {
		if in.nova.AggregateNames, err = apidb.AggregateNames(ctx, dbs.API); err != nil {
			return nil, err
		}
		if usage {
			if in.nova.AggregateMetadata, err = apidb.AggregateMetadata(ctx, dbs.API); err != nil {
				return nil, err
			}
		}
	}
	in.Aggregate = o.Aggregate
	if in.Aggregate != "" && !candidates.UUIDLike(in.Aggregate) {
		for u, n := range in.nova.AggregateNames {
			if n == in.Aggregate {
				in.Aggregate = u
			}
		}
		if in.Aggregate == o.Aggregate {
			return nil, cmdutil.UsageError("--aggregate %q: not a UUID, and no Nova host aggregate has that name", o.Aggregate)
		}
	}
	return in, nil
}

// loadThroughAPI reads the model through the Placement API: every
// provider's inventories, usages, traits and aggregates
// (placementclient.LoadModelInput); with usage, also the usage per
// project.
func (in *capacityInput) loadThroughAPI(ctx context.Context, f *cmdutil.Factory, usage bool) error {
	c, err := f.PlacementClient(ctx)
	if err != nil {
		return err
	}
	source := "the Placement API at " + c.Endpoint()
	mi, err := c.LoadModelInput(ctx, 8)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if in.Model, err = candidates.NewModel(mi); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if !usage {
		return nil
	}
	// The API has no read of usage per project for all projects (GET
	// /usages needs a project_id, and nothing lists the projects): every
	// provider's allocations and each consumer's project, as the claims
	// audit reads them (one GET /allocations/{consumer} each), summed as
	// the database path's query sums them. Both leave out allocations
	// without a consumers row (placement-api lists a provider's
	// allocations joined to their consumers).
	rows, err := (&placementclient.ClaimsLedger{C: c}).AllocationRows(ctx)
	if err != nil {
		return fmt.Errorf("%s: usage per project: %w", source, err)
	}
	sum := map[[2]string]int64{}
	for _, r := range rows {
		if r.HasConsumer {
			sum[[2]string{r.Project, r.Class}] += r.Used
		}
	}
	keys := slices.Collect(maps.Keys(sum))
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	for _, k := range keys {
		in.projects = append(in.projects, metrics.ProjectUsage{ProjectID: k[0], Class: k[1], Used: sum[k]})
	}
	return nil
}

// loadCapacityFlavors reads the flavors named (files or API database
// names), or every public enabled flavor of the API database.
func loadCapacityFlavors(ctx context.Context, f *cmdutil.Factory, args []string) ([]nova.Flavor, error) {
	var out []nova.Flavor
	if len(args) == 0 {
		dbs, err := f.Databases(ctx, storage.NeedAPI, 0)
		if err != nil {
			return nil, fmt.Errorf("capacity without --flavor counts the API database's flavors: %w", err)
		}
		defer dbs.Close()
		all, err := apidb.ListFlavors(ctx, dbs.API, "")
		if err != nil {
			return nil, err
		}
		for _, fl := range all {
			if fl.IsPublic && !fl.Disabled {
				out = append(out, fl)
			}
		}
		if len(out) == 0 {
			return nil, cmdutil.UsageError("the %s has no public flavor: name one with --flavor", dbs.API.Label())
		}
		return out, nil
	}
	seen := map[string]bool{}
	for _, a := range args {
		fl, _, err := LoadFlavorArg(ctx, f, a)
		if err != nil {
			return nil, err
		}
		if seen[fl.Name] {
			return nil, cmdutil.UsageError("flavor %s is named twice", fl.Name)
		}
		seen[fl.Name] = true
		out = append(out, *fl)
	}
	return out, nil
}

// capacityFlavor builds the requests Nova sends for one flavor; a flavor
// Nova or Placement would refuse is invalid input.
func capacityFlavor(f *cmdutil.Factory, fl *nova.Flavor, img *flavors.Image, o *FlavorOptions) (capacity.Flavor, error) {
	opt, err := o.Options(0)
	if err != nil {
		return capacity.Flavor{}, err
	}
	cf, warnings, err := capacity.NewFlavor(fl, img, opt)
	for _, w := range warnings {
		fmt.Fprintf(f.IO.ErrOut, "flavor %s: Nova ignores an extra spec: %s\n", fl.Name, w)
	}
	var ne *flavors.NovaError
	var ae *candidates.APIError
	switch {
	case errors.As(err, &ne):
		return cf, cmdutil.UsageError("flavor %s: Nova refuses it (%s): %s", fl.Name, ne.Exception, ne.Message)
	case errors.As(err, &ae):
		return cf, cmdutil.UsageError("flavor %s: Placement would refuse %v", fl.Name, err)
	}
	return cf, err
}

package candidates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/candcompare"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// Exit codes of `rpctl candidates --compare`.
const (
	compareEqual     = 0
	compareDifferent = 1
	compareBadInput  = 2
	compareFailed    = 255
)

const compareHelp = `

--compare sends the same query to the live Placement API (--os-cloud or --os-endpoint)
and to the built-in core, and prints the differences. The core loads the Placement
database when one is named (--db, --placement-db, --config-file), else it reads the
providers, inventories, usages, traits and aggregates through the API itself. Placement
unreachable or an authentication failure exits 255, never 1.`

// failed wraps an unexpected error so it cannot be mistaken for "different".
func failed(err error) error {
	var ee *cmdutil.ExitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &cmdutil.ExitError{Code: compareFailed, Err: err}
}

func runCandidatesCompare(c *cobra.Command, f *cmdutil.Factory, o *CandidatesOptions) error {
	switch f.Format {
	case output.Table, output.JSON, "":
	default:
		return cmdutil.UsageError("candidates --compare prints -f table or -f json, not %q", f.Format)
	}
	if o.Randomize {
		return cmdutil.UsageError("--compare cannot use --randomize: the two answers would be different samples")
	}
	if o.Flavor != "" || o.ShowRequest {
		return cmdutil.UsageError("--compare takes the request flags (--resources, --query, ...), not --flavor: run --flavor --show-request and pass its query with --query")
	}
	if !f.UsePlacementAPI() {
		return cmdutil.UsageError("--compare needs the live Placement API: give --os-cloud NAME or --os-endpoint URL --os-token T")
	}
	mv, err := candidates.ParseMicroversion(o.Microversion)
	if err != nil {
		return placementError(f, err, 0)
	}
	ctx := c.Context()
	client, err := f.PlacementClient(ctx)
	if err != nil {
		return failed(err)
	}
	start := time.Now()
	var model *candidates.Model
	source := "the Placement API at " + client.Endpoint()
	if f.Embedded != "" || f.PlacementDB != "" || len(f.ConfigFiles) > 0 {
		dbs, err := f.Databases(ctx, storage.NeedPlacement, 0)
		if err != nil {
			return failed(err)
		}
		defer dbs.Close()
		source = dbs.Placement.Label()
		if model, err = placementdb.LoadPlacement(ctx, dbs.Placement); err != nil {
			return failed(err)
		}
	} else {
		in, err := client.LoadModelInput(ctx, 8)
		if err != nil {
			return failed(err)
		}
		if model, err = candidates.NewModel(in); err != nil {
			return failed(err)
		}
	}
	if f.IO.Verbose {
		fmt.Fprintf(f.IO.ErrOut, "loaded %d resource providers from %s in %v\n", model.NumProviders(), source, time.Since(start).Round(time.Millisecond))
	}
	raw, err := ComposeCandidatesQuery(o, func(s string) (string, error) { return resolveProvider(model, s) })
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	status, body, err := client.AllocationCandidatesAt(ctx, placementclient.Version{Major: 1, Minor: int(mv)}, raw)
	var pe *placementclient.Error
	if err != nil && !errors.As(err, &pe) {
		return failed(err)
	}
	theirs := candcompare.Answer{Status: status, Body: body}
	ours, err := coreAnswer(ctx, model, raw, mv, o, pe)
	if err != nil {
		return err
	}
	diffs, err := candcompare.Diff(theirs, ours)
	if err != nil {
		return failed(err)
	}
	if f.Format == output.JSON {
		doc := map[string]any{"query": raw, "microversion": fmt.Sprintf("1.%d", int(mv)), "equal": len(diffs) == 0,
			"placement_status": theirs.Status, "rpctl_status": ours.Status,
			"placement_allocation_requests": candcompare.Count(theirs.Body), "rpctl_allocation_requests": candcompare.Count(ours.Body),
			"differences": append([]string{}, diffs...)}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return failed(err)
		}
		fmt.Fprintf(f.IO.Out, "%s\n", b)
	} else {
		fmt.Fprintf(f.IO.Out, "GET /allocation_candidates?%s at 1.%d\n", raw, int(mv))
		fmt.Fprintf(f.IO.Out, "Placement (%s): %s\n", client.Endpoint(), summary(theirs))
		fmt.Fprintf(f.IO.Out, "rpctl (%s): %s\n", source, summary(ours))
		if len(diffs) == 0 {
			fmt.Fprintln(f.IO.Out, "The answers agree.")
		} else {
			fmt.Fprintf(f.IO.Out, "%d difference%s:\n", len(diffs), plural(len(diffs)))
			for _, d := range diffs {
				fmt.Fprintf(f.IO.Out, "  %s\n", d)
			}
		}
	}
	if len(diffs) > 0 {
		return cmdutil.Exit(compareDifferent)
	}
	return nil
}

// coreAnswer is what the built-in core answers, as Placement would send it
// (an error body carries Placement's request id, which is not compared).
//
// A search stopped by a signal or at a ceiling has no answer to compare:
// that is its error.
func coreAnswer(ctx context.Context, model *candidates.Model, raw string, mv candidates.Microversion, o *CandidatesOptions, pe *placementclient.Error) (candcompare.Answer, error) {
	rid := ""
	if pe != nil {
		rid = pe.RequestID
	}
	req, err := candidates.ParseQuery(raw, mv)
	var res *candidates.Result
	if err == nil {
		res, err = model.Search(ctx, req, o.searchOptions())
	}
	var ae *candidates.APIError
	var ce *candidates.CeilingError
	var se *candidates.StepsError
	switch {
	case errors.As(err, &ae):
		return candcompare.Answer{Status: ae.Status, Body: ae.Body(mv, rid)}, nil
	case errors.As(err, &ce), errors.As(err, &se):
		return candcompare.Answer{}, cmdutil.SearchError(err, cmdutil.CandidatesHint)
	case ctx.Err() != nil:
		return candcompare.Answer{}, context.Cause(ctx)
	case err != nil:
		return candcompare.Answer{Status: 500, Body: []byte(err.Error())}, nil
	}
	body, err := res.MarshalPlacement(mv)
	if err != nil {
		return candcompare.Answer{Status: 500, Body: []byte(err.Error())}, nil
	}
	return candcompare.Answer{Status: 200, Body: body}, nil
}

func summary(a candcompare.Answer) string {
	if a.Status == 200 {
		n := candcompare.Count(a.Body)
		return fmt.Sprintf("200, %d allocation request%s", n, plural(n))
	}
	return fmt.Sprintf("%d", a.Status)
}

package candidates

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/output"
)

// flavorQuery resolves --flavor into the query string Nova would send and,
// with --show-request, prints it and reports done.
func flavorQuery(ctx context.Context, f *cmdutil.Factory, o *CandidatesOptions) (query string, done bool, err error) {
	fl, fileImg, err := shared.LoadFlavorArg(ctx, f, o.Flavor)
	if err != nil {
		return "", false, err
	}
	img, err := o.FlavorOptions.LoadImage(fileImg)
	if err != nil {
		return "", false, err
	}
	limit := flavors.DefaultLimit
	if o.LimitSet {
		// --limit replaces [scheduler]max_placement_results, not a second
		// limit parameter.
		limit, o.LimitSet = o.Limit, false
	}
	opt, err := o.FlavorOptions.Options(limit)
	if err != nil {
		return "", false, err
	}
	r, err := shared.BuildFlavorRequest(f, fl, img, opt)
	if err != nil {
		return "", false, err
	}
	if !o.ShowRequest {
		if r.CPUPinningRequested {
			fmt.Fprintf(f.IO.ErrOut, "flavor %s asks for pinned CPUs (PCPU): Nova also asks, for hosts not yet reporting PCPU, the same with VCPU (see --show-request); this answer is the PCPU query's\n", fl.Name)
		}
		return r.QueryString(), false, nil
	}
	var fallback *flavors.Request
	if r.CPUPinningRequested {
		opt.NoPinningTranslate = true
		if fallback, err = shared.BuildFlavorRequest(f, fl, img, opt); err != nil {
			return "", false, err
		}
	}
	return "", true, writeShowRequest(f, fl, r, fallback)
}

type showRequestJSON struct {
	Flavor        string           `json:"flavor"`
	Query         string           `json:"query"`
	Request       *flavors.Request `json:"request"`
	FallbackQuery string           `json:"fallback_query,omitempty"`
}

// writeShowRequest prints the request group by group and, last, the query
// string to_querystring() gives (with -f json: one object).
func writeShowRequest(f *cmdutil.Factory, fl *nova.Flavor, r, fallback *flavors.Request) error {
	out := f.IO.Out
	if f.Format == output.JSON {
		v := showRequestJSON{Flavor: fl.Name, Query: r.QueryString(), Request: r}
		if fallback != nil {
			v.FallbackQuery = fallback.QueryString()
		}
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false) // the query's "&" stays readable
		return enc.Encode(v)
	}
	fmt.Fprintf(out, "flavor %s: %d vCPU, %d MB RAM, %d GB root, %d GB ephemeral, %d MB swap\n",
		fl.Name, fl.VCPUs, fl.MemoryMB, fl.RootGB, fl.EphemeralGB, fl.Swap)
	for _, g := range r.Groups {
		line := fmt.Sprintf("  group %s: %s", groupName(g.Suffix), strings.Join(sortedAmounts(g.Resources), ", "))
		if len(g.Required) > 0 {
			line += "; required " + strings.Join(g.Required, ",")
		}
		if len(g.Forbidden) > 0 {
			line += "; forbidden " + strings.Join(g.Forbidden, ",")
		}
		fmt.Fprintln(out, line)
	}
	if r.GroupPolicy != "" {
		fmt.Fprintf(out, "  group_policy: %s\n", r.GroupPolicy)
	}
	var root []string
	root = append(root, r.RootRequired...)
	for _, t := range r.RootForbidden {
		root = append(root, "!"+t)
	}
	if len(root) > 0 {
		fmt.Fprintf(out, "  root_required: %s\n", strings.Join(root, ","))
	}
	if fallback != nil {
		fmt.Fprintf(out, "  pinned CPUs: Nova also asks, for hosts not yet reporting PCPU: %s\n", fallback.QueryString())
	}
	_, err := fmt.Fprintln(out, r.QueryString())
	return err
}

func sortedAmounts(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return out
}

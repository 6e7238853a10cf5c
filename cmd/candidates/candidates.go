// Package candidates holds `rpctl candidates`: GET /allocation_candidates
// from the built-in Placement core, --explain, --flavor and compare.
package candidates

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/gcfloor"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// CandidatesOptions are the flags of `rpctl candidates`. Every request flag
// becomes a parameter of a Placement query string, so candidates.ParseQuery
// is the one place that decides what is valid, with Placement's messages.
type CandidatesOptions struct {
	Query     string
	Resources string
	// Resource and Forbidden are osc's spellings: --resource CLASS=N
	// (repeatable) adds to --resources, --forbidden T (repeatable) is a
	// required=!T,... parameter.
	Resource      []string
	Forbidden     []string
	Required      []string
	MemberOf      []string
	InTree        string
	Groups        []string
	GroupPolicy   string
	RootRequired  []string
	SameSubtree   []string
	Limit         int
	LimitSet      bool
	Microversion  string
	Randomize     bool
	Seed          int64
	SeedSet       bool
	MaxCandidates int
	// MaxCandidatesSet: without it, the default ceiling applies.
	MaxCandidatesSet bool
	// MaxSteps bounds the search's walk (0: no bound).
	MaxSteps int64
	Strategy string
	// StrategySet: --strategy was given (it and --max-candidates win over
	// placement.conf's options).
	StrategySet bool
	Explain     bool
	Compare     bool
	// --flavor: the request Nova builds for a flavor replaces --query's
	// start; --show-request prints it and stops.
	shared.FlavorOptions
	ShowRequest bool
}

// NewCmdCandidates builds `rpctl candidates`. runF, when not nil, gets the parsed
// options instead of the command running (how the flags are tested, as the
// GitHub CLI's NewCmd constructors).
func NewCmdCandidates(f *cmdutil.Factory, runF func(*CandidatesOptions) error) *cobra.Command {
	o := &CandidatesOptions{}
	c := &cobra.Command{
		Use:   "candidates",
		Short: "Answer GET /allocation_candidates offline from the Placement database, and explain the hosts left out",
		Long: `Load the Placement database into memory and answer GET /allocation_candidates the way
Placement 8.0.0 does at --microversion (1.10–1.39, default 1.39), without asking the API.

The request flags compose a Placement query string (appended to --query, if given):
  --resources VCPU:2,MEMORY_MB:2048       resources=...
  --required T,!U  --required in:A,B      required=... (repeatable)
  --member-of UUID --member-of in:U1,U2   member_of=... (repeatable, ANDed from 1.24)
  --in-tree UUID|NAME                     in_tree=... (a provider name is looked up)
  --group _NET1:resources=SRIOV_NET_VF:1,required=CUSTOM_PHYSNET_X,member_of=U,in_tree=N
                                          resources_NET1=...&required_NET1=... (repeatable)
  --group-policy none|isolate  --root-required T,!U  --same-subtree _A,_B  --limit N

-f json prints the exact body Placement would return; -f table shows, per candidate, the
host, each provider with what it gives, and used/capacity after the allocation.
--explain adds, for every host without a candidate, the first reason per request group.

Candidates are ordered by root provider id, then by group choices (see docs/candidates.md); --limit
keeps the first N (or a random sample with --randomize, as Placement's
randomize_allocation_candidates does).

--flavor NAME|FILE asks what Nova 26's scheduler asks for that flavor (a name or id in the
API database, or a JSON/YAML file: 'openstack flavor show -f json' output, or {"name",
"vcpus", "ram", "disk", "ephemeral", "swap", "extra_specs"}), with --image/--image-property
for the image: resources, granular groups, traits, group_policy, hw:cpu_policy (PCPU),
memory encryption, vPMEM, vTPM, secure boot, and the root traits of Nova's request filters
(!COMPUTE_STATUS_DISABLED, ...), at microversion 1.36 with limit=1000 unless told otherwise.
--show-request prints that request; its last line is the query string Nova sends.

Bounded work: an answer holds at most --max-candidates allocation requests. Left unset,
a ceiling of 100000 applies, counted while the candidates are generated (so memory stays
bounded: about 1.5 KB per candidate with twenty groups, under 512 MB of peak RSS); a request
that would produce more fails with exit 3 instead of exhausting memory. --limit N keeps the
first N (the search stops there), --max-candidates N stops generating after N the way
Placement's max_allocation_candidates does, --max-candidates 0 lifts every bound.
--explain walks at most 20000 combinations of the request groups per host; a host beyond
that is listed as "explanation incomplete" rather than guessed at.

--release 2025.1 follows Placement 13, which reads placement.conf's [placement]
max_allocation_candidates (it stops generating there; 0 still gives one, a negative value
no bound) and allocation_candidates_generation_strategy (depth-first or breadth-first):
rpctl applies them from the config files unless --max-candidates or --strategy is given.
Below microversion 1.29 on a cloud with nested providers, the candidates that use two
providers of one tree count toward the bound before they are dropped, as in Placement 13:
the answer may hold fewer than the bound, even none.
2023.2, 2024.1 and 2024.2 read them too, from their point releases Placement 10.0.1, 11.0.1
and 12.0.1 on (backports). Zed's Placement 8 and 2023.1's Placement 9 have neither option,
and --release zed (the default) or 2023.1 ignores them.` + apiHelp + compareHelp,
		Example: `  rpctl --db cloud.db candidates --resources VCPU:1,MEMORY_MB:512 --limit 5
  rpctl --placement-db mysql+pymysql://placement:pw@db/placement candidates \
      --query 'resources=VCPU:2&required=HW_CPU_X86_AVX2' --explain
  rpctl --db cloud.db candidates --resources VCPU:1 \
      --group _NET:resources=SRIOV_NET_VF:1,required=CUSTOM_PHYSNET1 --group-policy none -f json
  rpctl --db cloud.db candidates --flavor m1.large --show-request
  rpctl --db cloud.db candidates --flavor flavor.json --image-property hw_cpu_policy=dedicated --explain`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.LimitSet = c.Flags().Changed("limit")
			o.MaxCandidatesSet = c.Flags().Changed("max-candidates")
			o.StrategySet = c.Flags().Changed("strategy")
			o.SeedSet = c.Flags().Changed("seed")
			if o.Flavor != "" && !c.Flags().Changed("microversion") {
				o.Microversion = "1.36" // what Nova 26 asks at
			}
			if runF != nil {
				return runF(o)
			}
			if o.Compare {
				return runCandidatesCompare(c, f, o)
			}
			return runCandidates(c, f, o)
		},
	}
	cmdutil.SetExitCodes(c, append([]cmdutil.ExitCodeRow{
		cmdutil.ExitCodeRow{Code: cmdutil.ExitOK, Meaning: "answered (also when there is no candidate); with --compare: the live API and the core agree"},
		cmdutil.ExitCodeRow{Code: compareDifferent, Meaning: "with --compare: the answers differ"},
		cmdutil.ExitCodeRow{Code: cmdutil.ExitFailed, Meaning: "invalid request (Placement's 400 message, a flavor Nova refuses, a bad flavor file, or a bad --strategy/--max-candidates)"},
	}, cmdutil.SearchExitCodes()...)...)
	fl := c.Flags()
	fl.StringVar(&o.Query, "query", "", "a raw Placement query string, e.g. 'resources=VCPU:1&required=HW_CPU_X86_AVX2'")
	fl.StringVar(&o.Resources, "resources", "", "resources of the unsuffixed group, e.g. VCPU:2,MEMORY_MB:2048")
	fl.StringArrayVar(&o.Resource, "resource", nil, "CLASS=N of the unsuffixed group, as osc's --resource (repeatable; added to --resources)")
	fl.StringArrayVar(&o.Forbidden, "forbidden", nil, "a forbidden trait of the unsuffixed group, as osc's --forbidden (repeatable; required=!T)")
	fl.StringArrayVar(&o.Required, "required", nil, "required traits of the unsuffixed group: T, !T (forbidden), in:A,B (repeatable)")
	fl.StringArrayVar(&o.MemberOf, "member-of", nil, "aggregate UUIDs of the unsuffixed group: U, in:U1,U2, !U, !in:U1,U2 (repeatable)")
	fl.StringVar(&o.InTree, "in-tree", "", "only providers in the tree of this provider (UUID or name)")
	fl.StringArrayVar(&o.Groups, "group", nil, "a granular group SUFFIX:resources=...,required=...,member_of=...,in_tree=... (repeatable)")
	fl.StringVar(&o.GroupPolicy, "group-policy", "", "none or isolate (required with more than one suffixed group)")
	fl.StringArrayVar(&o.RootRequired, "root-required", nil, "traits the root provider must (T) or must not (!T) have (repeatable)")
	fl.StringArrayVar(&o.SameSubtree, "same-subtree", nil, "suffixes whose providers must share a subtree, e.g. _COMPUTE,_NET (repeatable)")
	fl.IntVar(&o.Limit, "limit", 0, "return at most N allocation requests")
	fl.StringVar(&o.Microversion, "microversion", "1.39", "Placement microversion to answer at (1.10–1.39 or latest)")
	fl.BoolVar(&o.Randomize, "randomize", false, "sample --limit candidates at random, like randomize_allocation_candidates")
	fl.Int64Var(&o.Seed, "seed", 0, "random seed for --randomize (default: time-based, printed with --verbose)")
	fl.IntVar(&o.MaxCandidates, "max-candidates", 0, fmt.Sprintf("stop generating after N candidates, like max_allocation_candidates; 0 = no bound on their number or memory (default: fail with exit 3 above %d)", cmdutil.DefaultCandidateCeiling))
	cmdutil.AddMaxStepsFlag(fl, &o.MaxSteps)
	fl.StringVar(&o.Strategy, "strategy", "depth-first", "with --max-candidates: depth-first (host after host) or breadth-first (round robin over hosts)")
	fl.BoolVar(&o.Explain, "explain", false, "also explain, for every host without a candidate, why not")
	fl.StringVar(&o.Flavor, "flavor", "", "ask what Nova 26's scheduler asks for this flavor: a name or id in the API database, or a JSON/YAML file")
	cmdutil.MarkPathFlags(fl, "input", "flavor")
	fl.BoolVar(&o.ShowRequest, "show-request", false, "with --flavor: print the request Nova builds (last line: its query string) and exit")
	shared.AddReleaseFlag(fl, &o.Release, "whose Nova builds a --flavor's request and whose Placement's [placement] candidate-generation options apply")
	shared.AddImageFlags(fl, &o.FlavorOptions)
	fl.BoolVar(&o.Compare, "compare", false, "ask the live Placement API (--os-cloud/--os-endpoint) the same and print the differences")
	return c
}

// searchOptions is the core's options for the flags: --max-candidates N
// cuts the answer at N, and 0 asks for all; either way the ceilings on
// the answer step aside.
func (o *CandidatesOptions) searchOptions() candidates.Options {
	opt := cmdutil.SearchBounds(o.MaxSteps)
	opt.MaxCandidates, opt.Strategy = o.MaxCandidates, o.Strategy
	if o.MaxCandidatesSet {
		opt.Ceiling, opt.CeilingBytes = candidates.NoLimit, candidates.NoLimit
	}
	return opt
}

// configGeneration applies placement.conf's candidate-generation options
// as the --release's Placement reads them (candidates.GenerationOf), where
// --max-candidates and --strategy leave them a say.
func (o *CandidatesOptions) configGeneration(f *cmdutil.Factory, opt *candidates.Options) error {
	rel, err := shared.ParseRelease(o.Release)
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	co, err := f.Options()
	if err != nil {
		return err
	}
	g, err := candidates.GenerationOf(rel, co.MaxAllocationCandidates.Value, co.MaxAllocationCandidates.Source,
		co.GenerationStrategy.Value, co.GenerationStrategy.Source)
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if !g.Applies {
		return nil
	}
	if !o.MaxCandidatesSet && g.MaxCandidates > 0 {
		// Placement's bound holds the answer to that many: the ceilings
		// step aside as for --max-candidates.
		opt.MaxCandidates = g.MaxCandidates
		opt.Ceiling, opt.CeilingBytes = candidates.NoLimit, candidates.NoLimit
	}
	if !o.StrategySet {
		opt.Strategy = g.Strategy
	}
	return nil
}

func runCandidates(c *cobra.Command, f *cmdutil.Factory, o *CandidatesOptions) error {
	if _, err := shared.ParseRelease(o.Release); err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if o.Strategy != "depth-first" && o.Strategy != "breadth-first" {
		return cmdutil.UsageError("invalid --strategy %q: choose depth-first or breadth-first", o.Strategy)
	}
	if o.MaxCandidates < 0 {
		return cmdutil.UsageError("invalid --max-candidates %d: give 0 (no cap) or more", o.MaxCandidates)
	}
	mv, err := candidates.ParseMicroversion(o.Microversion)
	if err != nil {
		return placementError(f, err, 0)
	}
	// One answer and exit: the first 64 MiB need no collection.
	gcfloor.Set(64 << 20)
	// One P does the work (the read, the model's provider part while the
	// read waits, then the search): with a second P the runtime starts
	// threads for the goroutines that wake meanwhile (the driver's,
	// database/sql's, signals') and hands work between them. On
	// placement-perfload that cost about 2 ms of the process's 20 ms of CPU
	// (81 alternated runs, load ~6; issue 35). The process already runs on
	// one P (topCommand.oneP); this is for callers that build the whole
	// tree.
	runtime.GOMAXPROCS(1)
	if o.Flavor != "" {
		q, done, err := flavorQuery(c.Context(), f, o)
		if err != nil || done {
			return err
		}
		o.Query = strings.Trim(q+"&"+strings.TrimPrefix(o.Query, "?"), "&")
	} else if o.ShowRequest {
		return cmdutil.UsageError("--show-request needs --flavor")
	}
	// Validate before touching the database: a provider name given to
	// --in-tree stands in as a well-formed UUID until the model can resolve it.
	named := false
	dummy := func(s string) (string, error) {
		if candidates.UUIDLike(s) {
			return s, nil
		}
		named = true
		return "00000000-0000-4000-8000-000000000000", nil
	}
	raw, err := ComposeCandidatesQuery(o, dummy)
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	early, err := candidates.ParseQuery(raw, mv)
	if err != nil {
		return placementError(f, err, mv)
	}

	if apiOnly(f) {
		return runCandidatesAPI(c, f, o, mv)
	}
	ctx := c.Context()
	// Only reads: the Placement database's connection takes the read's
	// statements in one round trip (storage.OpenReadScripts).
	dbs, err := f.Databases(ctx, storage.NeedPlacement|storage.PlacementReadScripts, 0)
	if err != nil {
		return err
	}
	defer dbs.Close()
	start := time.Now()
	// Only the trees the request can use are read, unless every host is
	// needed: --explain explains the ones left out, --randomize samples all,
	// and an in_tree given by name is resolved on the model.
	var model *candidates.Model
	if o.Explain || o.Randomize || named {
		model, err = placementdb.LoadPlacement(ctx, dbs.Placement)
	} else {
		model, err = placementdb.LoadPlacementFor(ctx, dbs.Placement, early)
	}
	if err != nil {
		return err
	}
	if f.IO.Verbose {
		fmt.Fprintf(f.IO.ErrOut, "loaded %d resource providers from %s in %v\n", model.NumProviders(), dbs.Placement.Label(), time.Since(start).Round(time.Millisecond))
	}
	raw, err = ComposeCandidatesQuery(o, func(s string) (string, error) { return resolveProvider(model, s) })
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	req, err := candidates.ParseQuery(raw, mv)
	if err != nil {
		return placementError(f, err, mv)
	}
	opt := o.searchOptions()
	if err := o.configGeneration(f, &opt); err != nil {
		return err
	}
	opt.Randomize, opt.Seed = o.Randomize, o.Seed
	if o.Randomize && !o.SeedSet {
		opt.Seed = time.Now().UnixNano()
	}
	if f.IO.Verbose {
		fmt.Fprintf(f.IO.ErrOut, "GET /allocation_candidates?%s at 1.%d", sanitize.String(raw), int(mv))
		if o.Randomize {
			fmt.Fprintf(f.IO.ErrOut, " (--seed %d)", opt.Seed)
		}
		fmt.Fprintln(f.IO.ErrOut)
	}
	start = time.Now()
	res, err := model.Search(ctx, req, opt)
	if err = cmdutil.SearchError(err, cmdutil.CandidatesHint); err != nil {
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) {
			return err
		}
		return placementError(f, err, mv)
	}
	if f.IO.Verbose {
		fmt.Fprintf(f.IO.ErrOut, "%d candidates in %v (%d steps)\n", len(res.Candidates), time.Since(start).Round(time.Microsecond), res.Steps)
	}
	var why []candidates.Explanation
	if o.Explain {
		if why, err = model.Explain(ctx, req, opt); err != nil {
			return cmdutil.SearchError(err, cmdutil.CandidatesHint)
		}
	}
	switch f.Format {
	case output.JSON, output.YAML:
		if f.Format == output.JSON && !o.Explain {
			f.IO.GrowOutputPipe(1 << 20)
			return res.WritePlacementTo(f.IO.Out, mv)
		}
		body, err := res.MarshalPlacement(mv)
		if err != nil {
			return err
		}
		if o.Explain {
			// --explain wraps Placement's body unchanged beside the reasons.
			ex, err := explanationsJSON(why)
			if err != nil {
				return err
			}
			body = []byte(fmt.Sprintf("{\"allocation_candidates\": %s, \"explanations\": %s}", body, ex))
		}
		if f.Format == output.YAML {
			return f.Output.WriteDocument(f.IO.Out, body)
		}
		_, err = f.IO.Out.Write(append(body, '\n'))
		return err
	case output.CSV, output.Value:
		// One table: the explanations when asked for, else the candidates.
		if o.Explain {
			return f.Write(explanationRows(why), nil)
		}
		return f.Write(candidateRows(res, false), nil)
	}
	return writeCandidatesTable(f, res, why, o.Explain, req)
}

// placementError prints a rejected request the way Placement would answer
// it: Placement's message on stderr (exit 2), and with -f json its error
// body on stdout.
func placementError(f *cmdutil.Factory, err error, mv candidates.Microversion) error {
	var ae *candidates.APIError
	if !errors.As(err, &ae) {
		return err
	}
	msg := ae.Message
	if ae.Status == 404 {
		msg = fmt.Sprintf("microversion 1.%d: Placement answers 404 Not Found (GET /allocation_candidates needs 1.10 or later)", int(mv))
	}
	if f.Format == output.JSON {
		fmt.Fprintf(f.IO.Out, "%s\n", ae.Body(mv, ""))
	}
	// JSON-schema failures carry jsonschema's multi-line report after a
	// blank line; its first paragraph is the message, the rest is in the
	// -f json body.
	if head, _, ok := strings.Cut(msg, "\n\n"); ok {
		msg = head
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	return &cmdutil.ExitError{Code: cmdutil.ExitFailed, Err: fmt.Errorf("invalid request, Placement would answer %d: %s", ae.Status, msg)}
}

// resolveProvider turns an --in-tree / in_tree value into a provider UUID.
func resolveProvider(m *candidates.Model, s string) (string, error) {
	if uuid, ok := m.ResolveProvider(s); ok {
		return uuid, nil
	}
	return "", fmt.Errorf("in_tree %q: no resource provider has that name or UUID", s)
}

// groupKeys are the per-group parameters --group accepts.
var groupKeys = []string{"resources", "required", "member_of", "in_tree"}

// ComposeCandidatesQuery builds the query string the flags mean, after
// o.Query. resolve maps in_tree values (names or UUIDs) to what goes into the
// query. Values are escaped, so the parser sees exactly what was typed.
func ComposeCandidatesQuery(o *CandidatesOptions, resolve func(string) (string, error)) (string, error) {
	var parts []string
	if q := strings.TrimPrefix(o.Query, "?"); q != "" {
		parts = append(parts, q)
	}
	add := func(k, v string) { parts = append(parts, k+"="+escapeQueryValue(v)) }
	resources := o.Resources
	for _, r := range o.Resource {
		rc, n, ok := strings.Cut(r, "=")
		if !ok || strings.Contains(n, "=") {
			return "", fmt.Errorf("--resource %q: want CLASS=N, as osc's --resource", r)
		}
		resources = strings.Trim(resources+","+rc+":"+n, ",")
	}
	if resources != "" {
		add("resources", resources)
	}
	for _, v := range o.Required {
		add("required", v)
	}
	if len(o.Forbidden) > 0 {
		var not []string
		for _, t := range o.Forbidden {
			not = append(not, "!"+t)
		}
		add("required", strings.Join(not, ","))
	}
	for _, v := range o.MemberOf {
		add("member_of", v)
	}
	if o.InTree != "" {
		u, err := resolve(o.InTree)
		if err != nil {
			return "", fmt.Errorf("--in-tree: %w", err)
		}
		add("in_tree", u)
	}
	for _, g := range o.Groups {
		suffix, kvs, err := parseGroupFlag(g)
		if err != nil {
			return "", err
		}
		for _, kv := range kvs {
			v := kv[1]
			if kv[0] == "in_tree" {
				if v, err = resolve(v); err != nil {
					return "", fmt.Errorf("--group %s: %w", suffix, err)
				}
			}
			add(kv[0]+suffix, v)
		}
	}
	if o.GroupPolicy != "" {
		add("group_policy", o.GroupPolicy)
	}
	for _, v := range o.RootRequired {
		add("root_required", v)
	}
	for _, v := range o.SameSubtree {
		add("same_subtree", v)
	}
	if o.LimitSet {
		add("limit", strconv.Itoa(o.Limit))
	}
	return strings.Join(parts, "&"), nil
}

// parseGroupFlag splits "SUFFIX:resources=A:1,B:2,required=T,!U" into the
// suffix and key/value pairs. Values hold commas themselves, so a new pair
// starts only at a comma followed by a known key and "=".
func parseGroupFlag(s string) (string, [][2]string, error) {
	suffix, rest, ok := strings.Cut(s, ":")
	if !ok || suffix == "" || rest == "" {
		return "", nil, fmt.Errorf("--group %q: want SUFFIX:resources=RC:N,...[,required=...][,member_of=...][,in_tree=...]", s)
	}
	var out [][2]string
	for _, tok := range strings.Split(rest, ",") {
		key, val, isPair := strings.Cut(tok, "=")
		if isPair && slices.Contains(groupKeys, key) {
			out = append(out, [2]string{key, val})
			continue
		}
		if len(out) == 0 {
			return "", nil, fmt.Errorf("--group %q: %q is not one of %s", s, tok, strings.Join(groupKeys, "=, ")+"=")
		}
		out[len(out)-1][1] += "," + tok
	}
	return suffix, out, nil
}

// escapeQueryValue percent-encodes what would change the query's structure
// (&, =, +, %, #, spaces and non-ASCII), keeping ":", ",", "!" readable in
// --verbose output.
func escapeQueryValue(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r == ':' || r == ',' || r == '!' || r == '_' || r == '-' || r == '.':
			b.WriteRune(r)
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		default:
			b.WriteString(url.QueryEscape(string(r)))
		}
	}
	return b.String()
}

// reasonTitle names each kind of explanation for a person reading the
// table (a switch, not a map: nothing is built at init).
func reasonTitle(k candidates.ReasonKind) string {
	switch k {
	case candidates.ReasonBadRequest:
		return "invalid request"
	case candidates.ReasonRootRequired:
		return "root_required"
	case candidates.ReasonNotInTree:
		return "not in in_tree"
	case candidates.ReasonMissingClass:
		return "no such resource"
	case candidates.ReasonCapacity:
		return "not enough free"
	case candidates.ReasonMinUnit:
		return "below min_unit"
	case candidates.ReasonMaxUnit:
		return "above max_unit"
	case candidates.ReasonStepSize:
		return "not a step_size multiple"
	case candidates.ReasonNotInAggregate:
		return "not in aggregate"
	case candidates.ReasonForbiddenAggregate:
		return "in forbidden aggregate"
	case candidates.ReasonForbiddenTrait:
		return "has forbidden trait"
	case candidates.ReasonMissingTrait:
		return "missing trait"
	case candidates.ReasonResourceless:
		return "resourceless group quirk"
	case candidates.ReasonGroupUnsatisfied:
		return "group cannot be satisfied"
	case candidates.ReasonNoCombination:
		return "groups do not combine"
	case candidates.ReasonIsolate:
		return "isolate conflict"
	case candidates.ReasonSameSubtree:
		return "same_subtree conflict"
	case candidates.ReasonMergedCapacity:
		return "groups together exceed capacity"
	case candidates.ReasonNestedBefore129:
		return "nested tree before 1.29"
	case candidates.ReasonSharingOnly:
		return "sharing providers only"
	case candidates.ReasonIncomplete:
		return "explanation incomplete"
	}
	return string(k)
}

func groupName(suffix string) string {
	if suffix == "" {
		return "(unsuffixed)"
	}
	return suffix
}

// writeCandidatesTable prints one block of rows per candidate: the host (root
// provider) once, then every provider and class it takes, with the request
// groups the provider serves and its used/capacity once the allocation is
// made.
func writeCandidatesTable(f *cmdutil.Factory, res *candidates.Result, why []candidates.Explanation, explain bool, req *candidates.Request) error {
	out := f.IO.Out
	views := res.Views()
	hosts := map[string]bool{}
	for _, v := range views {
		hosts[v.RootUUID] = true
	}
	if len(views) == 0 {
		fmt.Fprintln(out, "No allocation candidates.")
	} else {
		if err := f.Write(candidateRows(res, true), nil); err != nil {
			return err
		}
		note := ""
		if req.Limit > 0 && len(views) == req.Limit {
			note = fmt.Sprintf(" (--limit %d)", req.Limit)
		}
		fmt.Fprintf(out, "%d allocation candidate%s on %d host%s%s.\n", len(views), plural(len(views)), len(hosts), plural(len(hosts)), note)
	}
	if !explain {
		if len(views) == 0 {
			fmt.Fprintln(out, "Run with --explain to see why each host was left out.")
		}
		return nil
	}
	return writeExplanations(f, why)
}

// candidateRows are every provider and class each candidate takes, with the
// request groups the provider serves and its used/capacity once the
// allocation is made. grouped (the table) names the candidate and host on
// its first row only.
func candidateRows(res *candidates.Result, grouped bool) output.Rows {
	rows := output.Rows{Headers: []string{"candidate", "host", "provider", "groups", "resource_class", "amount", "used_after", "capacity"}}
	for i, v := range res.Views() {
		for k, p := range v.Parts {
			var num, host any = i + 1, v.RootName
			if grouped && k > 0 {
				num, host = "", ""
			}
			var groups []string
			for suffix, names := range v.Mappings {
				for _, n := range names {
					if n == p.ProviderName {
						groups = append(groups, groupName(suffix))
					}
				}
			}
			sort.Strings(groups)
			rows.Add(num, host, p.ProviderName, strings.Join(groups, ","), p.ResourceClass, p.Amount, p.UsedAfter, p.Capacity)
		}
	}
	return rows
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeExplanations leads with a count per reason, because at 2 a.m. "997
// hosts lack free VCPU" is the answer, then lists every host.
func writeExplanations(f *cmdutil.Factory, why []candidates.Explanation) error {
	out := f.IO.Out
	fmt.Fprintln(out)
	if len(why) == 0 {
		fmt.Fprintln(out, "Every host has at least one candidate.")
		return nil
	}
	if len(why) == 1 && why[0].Kind == candidates.ReasonBadRequest {
		fmt.Fprintf(out, "Placement would reject the request: %s\n", why[0].Message)
		return nil
	}
	counts := map[string]int{}
	var order []string
	for _, e := range why {
		k := reasonTitle(e.Kind)
		if e.Group != "" {
			k += " in group " + e.Group
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	sort.SliceStable(order, func(i, j int) bool { return counts[order[i]] > counts[order[j]] })
	fmt.Fprintf(out, "%d host%s without a candidate:\n", len(why), plural(len(why)))
	for _, k := range order {
		fmt.Fprintf(out, "  %6d  %s\n", counts[k], k)
	}
	return f.Write(explanationRows(why), nil)
}

// explanationRows are the hosts without a candidate and why.
func explanationRows(why []candidates.Explanation) output.Rows {
	rows := output.Rows{Headers: []string{"host", "group", "reason", "detail"}}
	for _, e := range why {
		// Group reasons come prefixed with the group's label, which the
		// group column already shows.
		g, msg := "", e.Message
		for _, label := range []string{"unsuffixed group: ", fmt.Sprintf("group %q: ", e.Group)} {
			if rest, ok := strings.CutPrefix(msg, label); ok {
				g, msg = groupName(e.Group), rest
				break
			}
		}
		rows.Add(e.RootName, g, reasonTitle(e.Kind), msg)
	}
	return rows
}

type explanationJSON struct {
	RootProviderUUID string `json:"root_provider_uuid"`
	RootProviderName string `json:"root_provider_name"`
	Group            string `json:"group"`
	Reason           string `json:"reason"`
	Detail           string `json:"detail"`
}

func explanationsJSON(why []candidates.Explanation) ([]byte, error) {
	out := make([]explanationJSON, len(why))
	for i, e := range why {
		out[i] = explanationJSON{e.RootUUID, e.RootName, e.Group, string(e.Kind), e.Message}
	}
	return json.Marshal(out)
}

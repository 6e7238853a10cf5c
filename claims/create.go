package claims

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/url"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/inventory"
)

// Exit codes of `claims create` and `claims release` besides 0, 127 and 255.
const (
	ExitRefused   = 2 // create: no candidate, capacity taken, consumer exists
	ExitNoRelease = 4 // release: the consumer holds nothing
)

// CreateRequest is one two-phase claim.
type CreateRequest struct {
	Consumer, Project, User string
	Resources               map[string]int64
	// Host restricts the claim to the tree of the compute node whose host
	// or hypervisor_hostname this is.
	Host string
}

// Claimed is what a claim took.
type Claimed struct {
	Consumer string
	Project  string
	User     string
	Root     string // the candidate's root provider name
	Parts    []candidates.PartView
	Attempts int
}

// RefusedError is a claim Placement's rules refuse: no candidate has the
// room, the room went to someone else on every attempt, or the consumer
// already holds allocations.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

// Creator makes claims: phase one picks a candidate (Picker), phase two
// writes it as PUT /allocations/{consumer} with consumer_generation null (a
// new consumer) does, capacity and generations checked in the write's
// transaction. A write that loses the room to a concurrent claim is retried
// from phase one, up to Attempts times.
type Creator struct {
	Placement Placement
	Picker    Picker
	// Nodes lists the compute nodes, for Host.
	Nodes    func(ctx context.Context) ([]NodeRef, error)
	Attempts int
	Rand     *rand.Rand
}

// Pick is the candidate phase one chose.
type Pick struct {
	Root   string // the candidate's root provider, by name when known
	Allocs map[string]ProviderAllocation
	Parts  []candidates.PartView
}

// Picker answers GET /allocation_candidates for query and picks one answer
// with rng; a nil Pick comes with the reason nothing fits.
type Picker interface {
	Pick(ctx context.Context, query url.Values, rng *rand.Rand) (*Pick, string, error)
}

// CorePicker picks with the built-in Placement core over a fresh read of the
// Placement database, at random among the first answers (so that concurrent
// claims spread over the hosts that fit), and explains an empty answer.
type CorePicker struct {
	Model func(ctx context.Context) (*candidates.Model, error)
	// Bounds are the search's ceilings (zero values: the core's defaults).
	Bounds candidates.Options
}

// Pick implements Picker.
func (p CorePicker) Pick(ctx context.Context, q url.Values, rng *rand.Rand) (*Pick, string, error) {
	model, err := p.Model(ctx)
	if err != nil {
		return nil, "", err
	}
	req, err := candidates.ParseQuery(q.Encode(), candidates.MaxMicroversion)
	if err != nil {
		var ae *candidates.APIError
		if errors.As(err, &ae) {
			return nil, "", fmt.Errorf("%w: %v", ErrBadInput, ae)
		}
		return nil, "", err
	}
	opt := p.Bounds
	opt.Randomize, opt.Seed = true, rng.Int63()
	res, err := model.Search(ctx, req, opt)
	if err != nil {
		return nil, "", err
	}
	if len(res.Candidates) == 0 {
		why, err := explain(ctx, model, req, p.Bounds)
		return nil, why, err
	}
	v := res.View(0)
	pick := &Pick{Root: v.RootName, Allocs: map[string]ProviderAllocation{}, Parts: v.Parts}
	for _, part := range v.Parts {
		pa := pick.Allocs[part.ProviderUUID]
		if pa.Resources == nil {
			pa.Resources = map[string]int64{}
		}
		pa.Resources[part.ResourceClass] += part.Amount
		pick.Allocs[part.ProviderUUID] = pa
	}
	return pick, "", nil
}

// ResourcesQuery renders resources as Placement's resources= value, classes
// in name order.
func ResourcesQuery(res map[string]int64) string {
	parts := make([]string, 0, len(res))
	for _, rc := range SortedClasses(res) {
		parts = append(parts, rc+":"+strconv.FormatInt(res[rc], 10))
	}
	return strings.Join(parts, ",")
}

// ParseResources reads "VCPU:2,MEMORY_MB:2048" (Placement's syntax).
func ParseResources(s string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		rc, n, ok := strings.Cut(strings.TrimSpace(part), ":")
		v, err := strconv.ParseInt(n, 10, 64)
		if !ok || rc == "" || err != nil || v < 1 {
			return nil, fmt.Errorf("%w: --resources %q: want CLASS:N[,CLASS:N…] with N a positive integer (at %q)", ErrBadInput, s, part)
		}
		if _, dup := out[rc]; dup {
			return nil, fmt.Errorf("%w: --resources %q: %s given twice", ErrBadInput, s, rc)
		}
		out[rc] = v
	}
	return out, nil
}

func (c *Creator) hostTree(ctx context.Context, host string) (string, error) {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return "", err
	}
	var found []NodeRef
	for _, n := range nodes {
		if n.Host == host || n.Node == host {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: --host %s: no live compute node has that host or hypervisor_hostname", ErrBadInput, host)
	case 1:
		return found[0].UUID, nil
	}
	names := make([]string, len(found))
	for i, n := range found {
		names[i] = n.Node
	}
	return "", fmt.Errorf("%w: --host %s has %d nodes (%s): name one of them", ErrBadInput, host, len(found), strings.Join(names, ", "))
}

// Create makes the claim.
func (c *Creator) Create(ctx context.Context, r CreateRequest) (*Claimed, error) {
	if len(r.Resources) == 0 {
		return nil, fmt.Errorf("%w: nothing to claim", ErrBadInput)
	}
	consumer, ok := candidates.CanonicalUUID(r.Consumer)
	if !ok {
		return nil, fmt.Errorf("%w: consumer %q is not a uuid", ErrBadInput, r.Consumer)
	}
	r.Consumer = consumer
	// Checked before any request: Placement refuses them only at the
	// write, which a retry loop would otherwise repeat.
	for _, f := range []struct{ what, id string }{{"--project", r.Project}, {"--user", r.User}} {
		if err := inventory.CheckExternalID(f.what, f.id); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
	}
	q := url.Values{"resources": {ResourcesQuery(r.Resources)}, "limit": {"8"}}
	if r.Host != "" {
		tree, err := c.hostTree(ctx, r.Host)
		if err != nil {
			return nil, err
		}
		q.Set("in_tree", tree)
	}
	attempts := max(c.Attempts, 1)
	rng := c.Rand
	if rng == nil {
		rng = rand.New(rand.NewSource(rand.Int63()))
	}
	var last string
	for attempt := 1; attempt <= attempts; attempt++ {
		pick, why, err := c.Picker.Pick(ctx, q, rng)
		if err != nil {
			return nil, err
		}
		if pick == nil {
			msg := "no allocation candidate for resources=" + ResourcesQuery(r.Resources)
			if r.Host != "" {
				msg += " on " + r.Host
			}
			if why != "" {
				msg += ": " + why
			}
			if last != "" {
				msg += " (an earlier attempt lost " + last + ")"
			}
			return nil, &RefusedError{Reason: msg}
		}
		_, err = c.Placement.PutAllocations(ctx, []Write{{Consumer: r.Consumer,
			Alloc: Allocations{Allocations: pick.Allocs, ProjectID: r.Project, UserID: r.User}}})
		if err == nil {
			return &Claimed{Consumer: r.Consumer, Project: r.Project, User: r.User, Root: pick.Root, Parts: pick.Parts, Attempts: attempt}, nil
		}
		var we *WriteError
		if !errors.As(err, &we) {
			return nil, err
		}
		if we.Conflict {
			return nil, &RefusedError{Reason: fmt.Sprintf("consumer %s already exists in Placement (%s): release it first, or claim under another uuid", r.Consumer, we.Detail)}
		}
		if we.Invalid {
			return nil, fmt.Errorf("%w: Placement refused the claim as a bad request: %s", ErrBadInput, we.Detail)
		}
		last = fmt.Sprintf("%s: %s", pick.Root, we.Detail)
	}
	return nil, &RefusedError{Reason: fmt.Sprintf("gave up after %d attempts, each candidate taken by a concurrent claim; last: %s", attempts, last)}
}

// explain says why nothing fits: the first reasons the core gives.
func explain(ctx context.Context, m *candidates.Model, req *candidates.Request, bounds candidates.Options) (string, error) {
	why, err := m.Explain(ctx, req, bounds)
	if err != nil {
		return "", err
	}
	const show = 3
	var parts []string
	for i, w := range why {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(why)-show))
			break
		}
		parts = append(parts, w.RootName+": "+w.Message)
	}
	return strings.Join(parts, "; "), nil
}

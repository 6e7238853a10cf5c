package placementclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net/url"
	"sort"
	"strings"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/claims"
)

// Claims is the Placement API backend of claims heal, create and release:
// it implements claims.Placement and claims.Picker with Placement's own
// GET /allocation_candidates, GET, PUT and DELETE /allocations/{consumer}.
type Claims struct {
	C *Client
	// ConsumerType is sent from microversion 1.38, where PUT requires it,
	// for the writes that name none of their own.
	ConsumerType string
	// Microversion, when set, is the version of GET and PUT
	// /allocations/{consumer} instead of the client's: heal uses 1.28, as
	// Nova's report client does (CONSUMER_GENERATION_VERSION).
	Microversion *Version
}

// NovaHealVersion is the microversion of Nova's report client for GET and
// PUT /allocations/{consumer} (nova/scheduler/client/report.py,
// CONSUMER_GENERATION_VERSION).
var NovaHealVersion = Version{1, 28}

func (a Claims) get(ctx context.Context, consumer string) (*Allocations, error) {
	if a.Microversion != nil {
		return a.C.GetAllocationsAt(ctx, *a.Microversion, consumer)
	}
	return a.C.GetAllocations(ctx, consumer)
}

func (a Claims) put(ctx context.Context, consumer string, body Allocations) error {
	if a.Microversion != nil {
		return a.C.SetAllocationsAt(ctx, *a.Microversion, consumer, body)
	}
	return a.C.SetAllocations(ctx, consumer, body)
}

// ConsumerAllocations is GET /allocations/{consumer} for each consumer.
func (a Claims) ConsumerAllocations(ctx context.Context, consumers []string) (map[string]*claims.Allocations, error) {
	out := map[string]*claims.Allocations{}
	for _, c := range consumers {
		got, err := a.get(ctx, c)
		if err != nil {
			return nil, err
		}
		if len(got.Allocations) == 0 {
			continue
		}
		al := &claims.Allocations{Allocations: map[string]claims.ProviderAllocation{}, ProjectID: got.ProjectID, UserID: got.UserID,
			ConsumerGeneration: got.ConsumerGeneration, ConsumerType: got.ConsumerType, Providers: got.Providers}
		for rp, pa := range got.Allocations {
			var gen int64
			if pa.Generation != nil {
				gen = *pa.Generation
			}
			al.Allocations[rp] = claims.ProviderAllocation{Generation: gen, Resources: pa.Resources, Classes: pa.Classes}
		}
		out[c] = al
	}
	return out, nil
}

// putTries is how often a PUT that lost a provider generation race inside
// Placement is sent, as Nova's report client's @retries does.
const putTries = 4

// PutAllocations is PUT /allocations/{consumer} for each write, in order.
// A 409 that is no consumer generation conflict (a provider generation race
// inside Placement: the body carries no provider generations) is sent again
// up to putTries times, as Nova does. Placement's 400 and 409 become
// *claims.WriteError (Conflict for a consumer generation conflict).
func (a Claims) PutAllocations(ctx context.Context, ws []claims.Write) (int, error) {
	for i, w := range ws {
		ct := w.Alloc.ConsumerType
		if ct == "" || ct == claims.UnknownConsumerType {
			ct = a.ConsumerType
		}
		body := Allocations{Allocations: map[string]ProviderAllocations{}, ProjectID: w.Alloc.ProjectID, UserID: w.Alloc.UserID,
			ConsumerGeneration: w.Alloc.ConsumerGeneration, ConsumerType: ct}
		for rp, pa := range w.Alloc.Allocations {
			body.Allocations[rp] = ProviderAllocations{Resources: pa.Resources}
		}
		var err error
		var pe *Error
		for try := 0; try < putTries; try++ {
			if err = a.put(ctx, w.Consumer, body); err == nil || !errors.As(err, &pe) || pe.Status != 409 ||
				pe.Code != CodeConcurrentUpdate || strings.Contains(pe.Message, "consumer generation conflict") {
				break
			}
		}
		switch {
		case err == nil:
			continue
		case errors.As(err, &pe) && (pe.Status == 400 || pe.Status == 409):
			return i, &claims.WriteError{Consumer: w.Consumer, Detail: pe.Message, Invalid: pe.Status == 400,
				Conflict: pe.Code == CodeConcurrentUpdate && strings.Contains(pe.Message, "consumer generation conflict")}
		default:
			return i, err
		}
	}
	return len(ws), nil
}

// Release is DELETE /allocations/{consumer}; false when Placement knows no
// allocation of it (404).
func (a Claims) Release(ctx context.Context, consumer string) (bool, error) {
	err := a.C.DeleteAllocations(ctx, consumer)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Pick asks Placement's GET /allocation_candidates and picks one of its
// answers at random.
func (a Claims) Pick(ctx context.Context, q url.Values, rng *rand.Rand) (*claims.Pick, string, error) {
	raw, err := a.C.AllocationCandidates(ctx, q.Encode())
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Status == 400 {
			return nil, "", fmt.Errorf("%w: %s", claims.ErrBadInput, pe.Message)
		}
		return nil, "", err
	}
	var body struct {
		AllocationRequests []struct {
			Allocations map[string]struct {
				Resources map[string]int64 `json:"resources"`
			} `json:"allocations"`
		} `json:"allocation_requests"`
		ProviderSummaries map[string]struct {
			Resources map[string]struct {
				Capacity int64 `json:"capacity"`
				Used     int64 `json:"used"`
			} `json:"resources"`
			RootProviderUUID string `json:"root_provider_uuid"`
		} `json:"provider_summaries"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, "", fmt.Errorf("GET /allocation_candidates: %v", err)
	}
	if len(body.AllocationRequests) == 0 {
		return nil, "Placement's GET /allocation_candidates answered none", nil
	}
	ar := body.AllocationRequests[rng.Intn(len(body.AllocationRequests))]
	pick := &claims.Pick{Allocs: map[string]claims.ProviderAllocation{}}
	rps := make([]string, 0, len(ar.Allocations))
	for rp := range ar.Allocations {
		rps = append(rps, rp)
	}
	sort.Strings(rps)
	for _, rp := range rps {
		res := ar.Allocations[rp].Resources
		pick.Allocs[rp] = claims.ProviderAllocation{Resources: res}
		sum := body.ProviderSummaries[rp]
		if pick.Root == "" || sum.RootProviderUUID == rp {
			pick.Root = rp
			if sum.RootProviderUUID != "" {
				pick.Root = sum.RootProviderUUID
			}
		}
		for _, rc := range claims.SortedClasses(res) {
			s := sum.Resources[rc]
			pick.Parts = append(pick.Parts, candidates.PartView{ProviderUUID: rp, ProviderName: rp, ResourceClass: rc,
				Amount: res[rc], UsedAfter: s.Used + res[rc], Capacity: s.Capacity})
		}
	}
	return pick, "", nil
}

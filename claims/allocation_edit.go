package claims

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ParseAllocation reads osc's --allocation rp=UUID,CLASS=N[,CLASS=N…]: one
// provider's part of a consumer's allocation.
func ParseAllocation(s string) (provider string, resources map[string]int64, err error) {
	resources = map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" || v == "" {
			return "", nil, fmt.Errorf("%w: --allocation %q: expected rp=UUID,CLASS=N,…", ErrBadInput, s)
		}
		if k == "rp" {
			provider = v
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return "", nil, fmt.Errorf("%w: --allocation %q: %s=%s is not a positive integer", ErrBadInput, s, k, v)
		}
		resources[k] += n
	}
	if provider == "" || len(resources) == 0 {
		return "", nil, fmt.Errorf("%w: --allocation %q: needs rp=UUID and at least one CLASS=N", ErrBadInput, s)
	}
	return provider, resources, nil
}

// Unset is osc's allocation unset: the consumer's allocation without the
// named providers (all of their classes) and classes (on every provider,
// or only on the named providers when both are given); a provider left
// with nothing goes. Naming what the consumer does not hold is refused.
func Unset(cur Allocations, providers, classes []string) (Allocations, error) {
	out := cur
	out.Allocations = map[string]ProviderAllocation{}
	for _, p := range providers {
		if _, ok := cur.Allocations[p]; !ok {
			return Allocations{}, fmt.Errorf("%w: the consumer has no allocation on provider %s (it has: %s)", ErrBadInput, p, strings.Join(slices.Sorted(maps.Keys(cur.Allocations)), ", "))
		}
	}
	held := map[string]bool{}
	for rp, pa := range cur.Allocations {
		touched := len(providers) == 0 || slices.Contains(providers, rp)
		res := map[string]int64{}
		for rc, n := range pa.Resources {
			held[rc] = held[rc] || touched
			drop := touched && (len(classes) == 0 || slices.Contains(classes, rc))
			if !drop {
				res[rc] = n
			}
		}
		if len(res) > 0 {
			out.Allocations[rp] = ProviderAllocation{Generation: pa.Generation, Resources: res}
		}
	}
	for _, rc := range classes {
		if !held[rc] {
			return Allocations{}, fmt.Errorf("%w: the consumer holds no %s there", ErrBadInput, rc)
		}
	}
	return out, nil
}

// DefaultConsumerType is the type rpctl's allocation set gives a consumer
// that has none and is named none (Nova's instances are INSTANCE).
const DefaultConsumerType = "INSTANCE"

// CheckConsumerType refuses a type PUT /allocations would refuse at 1.38
// (placement/schemas/allocation.py: ^[A-Z0-9_]+$, 1 to 255 characters).
func CheckConsumerType(t string) error {
	ok := len(t) > 0 && len(t) <= 255
	for _, r := range t {
		ok = ok && (r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}
	if !ok {
		return fmt.Errorf("%w: --consumer-type %q: must match ^[A-Z0-9_]+$ (at most 255 characters)", ErrBadInput, t)
	}
	return nil
}

package placementclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/rpctl/rpctl/claims"
)

// ClaimsLedger is the Placement API side of claims list, audit and
// snapshot: it implements claims.Ledger with the calls Nova's placement
// audit makes (GET /resource_providers, GET
// /resource_providers/{uuid}/allocations, GET, PUT and DELETE
// /allocations/{consumer}), plus one GET /allocations/{consumer} per
// consumer for what the provider listing does not show (project, user,
// consumer generation, and the age: Placement's API has no consumer
// created_at, so the age is the time since the consumer's allocations were
// last written, the answer's Last-Modified).
//
// The API exposes no provider ids: AllocationRows numbers providers in the
// order GET /resource_providers lists them (the order Nova's audit walks),
// and RemoveConsumerFromProvider takes those numbers.
type ClaimsLedger struct {
	C *Client
	// Workers bounds the concurrent per-consumer reads (default 4).
	Workers int

	providers []string // uuid of provider id i+1, from AllocationRows
}

// auditVersion is the microversion Nova's audit reads and writes
// allocations at (CONSUMER_GENERATION_VERSION); it also has Last-Modified
// (from 1.15).
var auditVersion = NovaHealVersion

// ProviderExists is Nova's check of --resource_provider: GET
// /resource_providers?uuid=UUID lists it.
func (l *ClaimsLedger) ProviderExists(ctx context.Context, uuid string) (bool, error) {
	rps, err := l.C.ListProviders(ctx, ProviderFilter{UUID: uuid})
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Status == http.StatusBadRequest {
			return false, nil // not a uuid: Placement refuses the filter
		}
		return false, err
	}
	return len(rps) > 0, nil
}

// AllocationRows reads every provider's allocations and every consumer's
// details, ordered by consumer, provider (listing order) and class.
func (l *ClaimsLedger) AllocationRows(ctx context.Context) ([]claims.AllocationRow, error) {
	rps, err := l.C.ListProviders(ctx, ProviderFilter{})
	if err != nil {
		return nil, err
	}
	l.providers = make([]string, len(rps))
	var rows []claims.AllocationRow
	for i, rp := range rps {
		l.providers[i] = rp.UUID
		got, err := l.C.GetProviderAllocations(ctx, rp.UUID)
		if err != nil {
			return nil, err
		}
		root := rp.RootProviderUUID
		if root == "" {
			root = rp.UUID
		}
		for consumer, ca := range got.Allocations {
			for rc, used := range ca.Resources {
				rows = append(rows, claims.AllocationRow{Consumer: consumer, ProviderID: int64(i + 1), ProviderUUID: rp.UUID,
					ProviderName: rp.Name, RootUUID: root, Class: rc, Used: used})
			}
		}
	}
	details, err := l.consumers(ctx, rows)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		d := details[rows[i].Consumer]
		rows[i].HasConsumer, rows[i].Project, rows[i].User, rows[i].Generation, rows[i].CreatedAt = true, d.project, d.user, d.generation, d.written
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Consumer != b.Consumer {
			return a.Consumer < b.Consumer
		}
		if a.ProviderID != b.ProviderID {
			return a.ProviderID < b.ProviderID
		}
		return a.Class < b.Class
	})
	return rows, nil
}

type consumerDetail struct {
	project, user string
	generation    int64
	written       time.Time
}

// consumers reads GET /allocations/{consumer} of every consumer in rows.
func (l *ClaimsLedger) consumers(ctx context.Context, rows []claims.AllocationRow) (map[string]consumerDetail, error) {
	var uuids []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Consumer] {
			seen[r.Consumer] = true
			uuids = append(uuids, r.Consumer)
		}
	}
	workers := l.Workers
	if workers < 1 {
		workers = 4
	}
	details := make([]consumerDetail, len(uuids))
	err := parallel(ctx, workers, len(uuids), func(i int) error {
		a, written, err := l.C.GetAllocationsWritten(ctx, auditVersion, uuids[i])
		if err != nil {
			return err
		}
		details[i] = consumerDetail{project: a.ProjectID, user: a.UserID, written: written}
		if a.ConsumerGeneration != nil {
			details[i].generation = *a.ConsumerGeneration
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]consumerDetail, len(uuids))
	for i, u := range uuids {
		out[u] = details[i]
	}
	return out, nil
}

// RemoveConsumerFromProvider is Nova's _delete_allocations_from_consumer:
// GET /allocations/{consumer}; when the consumer also holds other
// providers, PUT the rest (with its consumer_generation, so a concurrent
// change makes it fail), else DELETE /allocations/{consumer}. providerID is
// AllocationRows' number of the provider. False when the consumer no longer
// held the provider.
func (l *ClaimsLedger) RemoveConsumerFromProvider(ctx context.Context, consumer string, providerID int64) (bool, error) {
	if providerID < 1 || int(providerID) > len(l.providers) {
		return false, fmt.Errorf("provider %d: not one AllocationRows listed", providerID)
	}
	rp := l.providers[providerID-1]
	cur, err := l.C.GetAllocationsAt(ctx, auditVersion, consumer)
	if err != nil {
		return false, err
	}
	if _, ok := cur.Allocations[rp]; !ok {
		return false, nil
	}
	if len(cur.Allocations) > 1 {
		rest := Allocations{Allocations: map[string]ProviderAllocations{}, ProjectID: cur.ProjectID, UserID: cur.UserID,
			ConsumerGeneration: cur.ConsumerGeneration}
		for u, pa := range cur.Allocations {
			if u != rp {
				rest.Allocations[u] = ProviderAllocations{Resources: pa.Resources}
			}
		}
		if err := l.C.SetAllocationsAt(ctx, auditVersion, consumer, rest); err != nil {
			return false, err
		}
		return true, nil
	}
	err = l.C.DeleteAllocations(ctx, consumer)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

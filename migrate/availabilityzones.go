package migrate

import (
	"context"
	"time"

	"github.com/rpctl/rpctl/internal/nova"
)

// MissingAZName is the availability zone migration's row in the summary
// table, named as nova-manage names it.
const MissingAZName = "populate_missing_availability_zones"

// InstanceHost is an instance with a host and no availability zone.
type InstanceHost struct {
	ID   int64
	UUID string
	Host string
}

// AZCell is a cell database's side of populate_missing_availability_zones;
// storage/celldb implements it.
type AZCell interface {
	Name() string
	// InstancesMissingAZ returns up to limit instances (deleted ones
	// included) with a host and a NULL availability_zone, in the order the
	// database gives them (Nova's query has no ORDER BY).
	InstancesMissingAZ(ctx context.Context, limit int) ([]InstanceHost, error)
	// SetInstanceAZs sets availability_zone (and updated_at) of the
	// instances (by id) whose availability_zone is still NULL, and returns
	// how many it changed.
	SetInstanceAZs(ctx context.Context, azs map[int64]string, now time.Time) (int, error)
}

// AZAggregates is the API database's host aggregates, read for their
// availability_zone metadata; storage/apidb implements it.
type AZAggregates interface {
	ListAggregates(ctx context.Context) ([]nova.Aggregate, error)
}

// MissingAZ is Nova 26's populate_missing_availability_zones
// (nova/objects/instance.py), run over every cell with one budget
// (nova-manage runs it on the cell of [database] connection only).
type MissingAZ struct {
	Cells []AZCell
	API   AZAggregates // nil: no API database, every host in Default
	// Default is nova.conf's [DEFAULT] default_availability_zone ("nova").
	Default string
	Now     func() time.Time
}

// Name implements Migration.
func (*MissingAZ) Name() string { return MissingAZName }

// HostAZ is the zone avail_zone.get_host_availability_zone gives a host: the
// availability_zone metadata of the first aggregate (lowest id) holding the
// host that has one, else default_availability_zone.
func HostAZ(aggs []nova.Aggregate, host, def string) string {
	for _, a := range aggs {
		az, ok := a.Metadata["availability_zone"]
		if !ok {
			continue
		}
		for _, h := range a.Hosts {
			// AggregateList.get_by_host matches aggregate_hosts.host in
			// SQL, under MySQL's collation: as the aggregate sync does.
			if hostKey(h) == hostKey(host) {
				return az
			}
		}
	}
	return def
}

// Run implements Migration, as populate_missing_availability_zones does:
// up to count instances with a host and no availability zone, deleted ones
// included, each given its host's zone (HostAZ; instances without a host
// have no zone to take and are never touched); found and done are the
// instances read (Nova saves every one).
func (m *MissingAZ) Run(ctx context.Context, count int) (found, done int, err error) {
	var aggs []nova.Aggregate
	loaded := false
	now := timeNow(m.Now)
	for _, cell := range m.Cells {
		if count-found <= 0 {
			break
		}
		insts, err := cell.InstancesMissingAZ(ctx, count-found)
		if err != nil {
			return found, done, err
		}
		if len(insts) == 0 {
			continue
		}
		if !loaded && m.API != nil {
			if aggs, err = m.API.ListAggregates(ctx); err != nil {
				return found, done, err
			}
		}
		loaded = true
		azs := map[int64]string{}
		for _, in := range insts {
			azs[in.ID] = HostAZ(aggs, in.Host, m.Default)
		}
		// Rows another writer filled meanwhile count as done too: they
		// were migrated, as Nova counts every row it read.
		if _, err := cell.SetInstanceAZs(ctx, azs, now); err != nil {
			return found, done, err
		}
		found += len(insts)
		done += len(insts)
	}
	return found, done, nil
}

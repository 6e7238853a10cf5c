package migrate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/rpctl/rpctl/internal/release"
)

// Online migrations are the online data migrations of a release's own
// tools, in the order each runs them: nova-manage db
// online_data_migrations' (DbCommands.online_migrations,
// nova/cmd/manage.py) and placement-manage db online_data_migrations'
// (online_migrations, placement/cmd/manage.py), by their summary rows'
// names. migrate all runs a release's list and no other Nova or Placement
// migration (cmd/migrate: TestOnlineMigrationsOfRelease).
type Online struct {
	Nova, Placement []string
}

// OnlineOf returns release rel's online migrations ("" is
// release.Default); a release without a list is an error naming those
// with one.
func OnlineOf(rel release.Name) (Online, error) {
	if rel == "" {
		rel = release.Default
	}
	// Zed: Nova 26.2.2 nova/cmd/manage.py:160-184; 2025.1: Nova 31.0.0
	// nova/cmd/manage.py:198-224, the same ten and, last,
	// populate_instance_compute_id ("Added in 2023.2"). Between them, read
	// from the tags' nova/cmd/manage.py online_migrations: 27.5.1 has Zed's
	// ten, 28.3.1, 29.4.0 and 30.3.0 2025.1's eleven (their
	// populate_instance_compute_id is 31.0.0's, byte for byte).
	// placement-manage's two are the same in Placement 8.0.0 through 13.0.0
	// (placement/cmd/manage.py online_migrations).
	zed := []string{QuotaLimitsName, QuotaClassesName, MigrationUUIDName, BDMUUIDName, MissingAZName,
		QueuedForDeleteName, EmptyRatioName, FillVIFListName, UserIDName, PCIDevUUIDName}
	bobcat := append(slices.Clip(zed), InstanceComputeIDName)
	placement := []string{SetRootProviderIDsName, CreateIncompleteConsumersName}
	lists := map[release.Name]Online{
		release.Zed:     {Nova: zed, Placement: placement},
		release.R2023_1: {Nova: zed, Placement: placement},
		release.R2023_2: {Nova: bobcat, Placement: placement},
		release.R2024_1: {Nova: bobcat, Placement: placement},
		release.R2024_2: {Nova: bobcat, Placement: placement},
		release.R2025_1: {Nova: bobcat, Placement: placement},
	}
	o, ok := lists[rel]
	if !ok {
		return Online{}, fmt.Errorf("rpctl knows the online data migrations of %v, not of release %q", slices.Sorted(maps.Keys(lists)), rel)
	}
	return o, nil
}

// Upstream reports whether name is one of the online migrations of any
// release rpctl knows (a Nova or Placement one, not one of rpctl's own
// steps).
func Upstream(name string) bool {
	for _, rel := range release.Names() {
		o, err := OnlineOf(rel)
		if err != nil {
			continue
		}
		if slices.Contains(o.Nova, name) || slices.Contains(o.Placement, name) {
			return true
		}
	}
	return false
}

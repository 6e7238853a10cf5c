package migrate

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/migrate"
)

// TestOnlineMigrationsOfRelease: for each release, migrate all runs
// exactly that release's Nova and Placement online migrations
// (migrate.OnlineOf, each tool's own list), in the tools' order, and
// rpctl's own steps; a step of another release's subcommand is refused.
func TestOnlineMigrationsOfRelease(t *testing.T) {
	for _, rel := range release.Names() {
		t.Run(string(rel), func(t *testing.T) {
			specs, other, err := specsOfRelease(migrationSpecs(), string(rel))
			if err != nil || other != nil {
				t.Fatal(err, other)
			}
			online, err := migrate.OnlineOf(rel)
			if err != nil {
				t.Fatal(err)
			}
			var nova, placement, own []string
			for _, s := range specs {
				for _, r := range s.Rows {
					switch {
					case slices.Contains(online.Nova, r):
						nova = append(nova, r)
					case slices.Contains(online.Placement, r):
						placement = append(placement, r)
					default:
						if migrate.Upstream(r) {
							t.Errorf("%s runs %s, another release's migration", rel, r)
						}
						own = append(own, r)
					}
				}
			}
			if !slices.Equal(nova, online.Nova) || !slices.Equal(placement, online.Placement) {
				t.Errorf("%s: migrate all runs Nova's %v and Placement's %v, want %v and %v", rel, nova, placement, online.Nova, online.Placement)
			}
			if len(own) != 3 {
				t.Errorf("%s: rpctl's own steps %v, want inventory, aggregates, allocations", rel, own)
			}
		})
	}
	if got := len(must(migrate.OnlineOf(release.R2025_1)).Nova); got != 11 {
		t.Errorf("2025.1's nova-manage has 11 online migrations, the table %d", got)
	}
	_, err, _ := specsOfRelease([]migrationSpec{computeIDsMigration()}, "zed")
	if err == nil || !strings.Contains(err.Error(), "populate_instance_compute_id is not an online migration of release zed (it is of 2023.2, 2024.1, 2024.2, 2025.1)") {
		t.Errorf("compute-ids --release zed: %v", err)
	}
	// Read from each tag's nova/cmd/manage.py: Nova 27 (2023.1) runs Zed's
	// ten, Nova 28 (2023.2) added populate_instance_compute_id.
	for rel, n := range map[release.Name]int{release.Zed: 10, release.R2023_1: 10, release.R2023_2: 11, release.R2024_1: 11, release.R2024_2: 11} {
		if got := len(must(migrate.OnlineOf(rel)).Nova); got != n {
			t.Errorf("%s's nova-manage has %d online migrations, the table %d", rel, n, got)
		}
	}
	if _, err := migrate.OnlineOf("2025.2"); err == nil {
		t.Error("OnlineOf(2025.2): no error")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

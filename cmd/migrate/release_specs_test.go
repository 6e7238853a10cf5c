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
	if err == nil || !strings.Contains(err.Error(), "populate_instance_compute_id is not an online migration of release zed (it is of 2025.1)") {
		t.Errorf("compute-ids --release zed: %v", err)
	}
	if _, err := migrate.OnlineOf("2024.1"); err == nil {
		t.Error("OnlineOf(2024.1): no error")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package status_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/status"
)

// cellSource is a cell with an alembic head and its control services'
// highest version (0: none).
type cellSource struct {
	name, rev string
	version   int64
}

func (h cellSource) Name() string                                   { return h.name }
func (h cellSource) CellSchemaHead(context.Context) (string, error) { return h.rev, nil }
func (h cellSource) ServiceVersionRanges(_ context.Context, binaries []string) ([]status.ServiceVersionRange, error) {
	if h.version == 0 {
		return nil, nil
	}
	// An older conductor beside the newest one: the highest counts.
	return []status.ServiceVersionRange{{Binary: binaries[0], Count: 2, Min: h.version - 2, Max: h.version}}, nil
}

// TestReleasesOfCellHead: each release's db sync head (the git tags'
// nova/db/main/migrations/versions; Zed's and 2025.1's read from the real
// db syncs by TestDetectReleaseDBSync), and the heads rpctl refuses.
func TestReleasesOfCellHead(t *testing.T) {
	for _, tc := range []struct {
		head, want, err string
	}{
		{head: "ccb0fa1a2252", want: "zed"},
		{head: "960aac0e09ea", want: "2023.1"},
		{head: "1acf2c98e646", want: "2023.2"},
		{head: "13863f4e1612", want: "2024.1 or 2024.2"},
		{head: "2903cd72dc14", want: "2025.1"},
		{head: "1b91788ec3a6", err: "halfway through 2023.2's (Nova 28) db sync"},
		{head: "d60bddf7a903", err: "halfway through 2025.1's (Nova 31) db sync"},
		{head: "16f1fbcab42b", err: "older than Zed's head"},
		{head: "", err: "no alembic_version"},
		{head: "deadbeef0000", err: "no Nova cell schema head rpctl knows"},
	} {
		got, err := status.ReleasesOfCellHead(tc.head)
		var s []string
		for _, r := range got {
			s = append(s, string(r))
		}
		if strings.Join(s, " or ") != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ReleasesOfCellHead(%q) = %v, %v; want %q, error containing %q", tc.head, got, err, tc.want, tc.err)
		}
	}
	if _, err := status.ReleaseOfCellHead("13863f4e1612"); err == nil || !strings.Contains(err.Error(), "2024.1 or 2024.2 alike") {
		t.Errorf("ReleaseOfCellHead(13863f4e1612): %v", err)
	}
	if _, err := status.ReleasesOfCellHead("deadbeef0000"); err == nil || !strings.Contains(err.Error(), "--nova-release (zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1)") {
		t.Errorf("an unknown head does not ask for the nearest release: %v", err)
	}
}

// TestReleasesOfServiceVersion: SERVICE_VERSION of each release's Nova
// (nova/objects/service.py:34 of 26.2.2, 27.0.0, 28.0.0, 29.0.0, 30.0.0,
// 31.0.0).
func TestReleasesOfServiceVersion(t *testing.T) {
	for _, tc := range []struct {
		v     int64
		want  string
		newer bool
	}{
		{61, "", false},
		{64, "zed", false},
		{65, "", false},
		{66, "2023.1 2023.2 2024.1", false},
		{67, "2024.2", false},
		{68, "2025.1", false},
		{69, "", true},
	} {
		got, newer := status.ReleasesOfServiceVersion(tc.v)
		var s []string
		for _, r := range got {
			s = append(s, string(r))
		}
		if strings.Join(s, " ") != tc.want || newer != tc.newer {
			t.Errorf("ReleasesOfServiceVersion(%d) = %v, %v; want %q, %v", tc.v, got, newer, tc.want, tc.newer)
		}
	}
	for _, n := range release.Names() {
		if status.ServiceVersionOf(n) == 0 {
			t.Errorf("%s has no service version", n)
		}
	}
}

// TestDetectRelease: the two witnesses, which wins when they disagree
// (the schema: db sync runs first), and what is refused.
func TestDetectRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cells   []status.ReleaseSource
		want    release.Name
		witness status.Witness
		err     string
	}{
		{name: "zed agrees", cells: []status.ReleaseSource{cellSource{"cell1", "ccb0fa1a2252", 64}}, want: release.Zed, witness: status.WitnessBoth},
		{name: "2025.1 cells agree", cells: []status.ReleaseSource{cellSource{"cell0", "2903cd72dc14", 0}, cellSource{"cell1", "2903cd72dc14", 68}}, want: release.R2025_1, witness: status.WitnessBoth},
		{name: "2023.1 head, 66 fits", cells: []status.ReleaseSource{cellSource{"cell1", "960aac0e09ea", 66}}, want: release.R2023_1, witness: status.WitnessBoth},
		{name: "shared head, services at 66: 2024.1", cells: []status.ReleaseSource{cellSource{"cell1", "13863f4e1612", 66}}, want: release.R2024_1, witness: status.WitnessBoth},
		{name: "shared head, services at 67: 2024.2", cells: []status.ReleaseSource{cellSource{"cell1", "13863f4e1612", 67}}, want: release.R2024_2, witness: status.WitnessBoth},
		{name: "mid-upgrade: 2025.1 schema, 2024.2 services: the head wins", cells: []status.ReleaseSource{cellSource{"cell1", "2903cd72dc14", 67}}, want: release.R2025_1, witness: status.WitnessHead},
		{name: "mid-upgrade from Yoga", cells: []status.ReleaseSource{cellSource{"cell1", "ccb0fa1a2252", 61}}, want: release.Zed, witness: status.WitnessHead},
		{name: "head alone", cells: []status.ReleaseSource{cellSource{"cell1", "1acf2c98e646", 0}}, want: release.R2023_2, witness: status.WitnessHead},
		{name: "services alone", cells: []status.ReleaseSource{cellSource{"cell1", "", 67}}, want: release.R2024_2, witness: status.WitnessServices},
		{name: "shared head, no services", cells: []status.ReleaseSource{cellSource{"cell1", "13863f4e1612", 0}}, err: "the schema is 2024.1 or 2024.2's and the control services do not tell which"},
		{name: "shared head, services of Zed", cells: []status.ReleaseSource{cellSource{"cell1", "13863f4e1612", 64}}, err: "do not tell which; name the release with --nova-release"},
		{name: "services alone, ambiguous", cells: []status.ReleaseSource{cellSource{"cell1", "", 66}}, err: "2023.1 or 2023.2 or 2024.1's alike"},
		{name: "nothing", cells: []status.ReleaseSource{cellSource{"cell1", "", 0}}, err: "neither witness names a release"},
		{name: "services newer than rpctl knows", cells: []status.ReleaseSource{cellSource{"cell1", "2903cd72dc14", 70}}, err: "reports service version 70, newer than the newest release rpctl knows (2025.1: 68)"},
		{name: "unknown head", cells: []status.ReleaseSource{cellSource{"cell1", "a1b2c3d4e5f6", 68}}, err: "cell cell1: alembic revision a1b2c3d4e5f6 is no Nova cell schema head rpctl knows"},
		{name: "cells of two releases", cells: []status.ReleaseSource{cellSource{"cell1", "2903cd72dc14", 0}, cellSource{"cell2", "ccb0fa1a2252", 0}}, err: "different releases"},
		{name: "no cells", err: "no cell database"},
	} {
		d, err := status.DetectRelease(context.Background(), tc.cells)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %+v, %v; want an error containing %q", tc.name, d, err, tc.err)
			}
			continue
		}
		if err != nil || d.Release != tc.want || d.Witness != tc.witness || d.Seen == "" {
			t.Errorf("%s: %+v, %v; want %s by %s", tc.name, d, err, tc.want, tc.witness)
		}
	}
}

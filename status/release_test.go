package status_test

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/status"
)

// TestReleasesCoverEveryRelease: every release rpctl knows (one list,
// internal/release, that every --release flag reads) has its upstream
// checks' row, and no row is for a release the flags refuse.
func TestReleasesCoverEveryRelease(t *testing.T) {
	var rows []string
	for n := range status.Releases {
		rows = append(rows, string(n))
	}
	sort.Strings(rows)
	want := release.Strings()
	sort.Strings(want)
	if !slices.Equal(rows, want) {
		t.Errorf("status.Releases has %v, internal/release knows %v", rows, want)
	}
	for n, r := range status.Releases {
		if r.OldestCompute == "" || r.OldestComputeVersion == 0 || r.MinPlacementMicroversion == "" ||
			r.MinCinderMicroversion == "" || r.NovaPolicyDefault == "" || r.PlacementPolicyDefault == "" ||
			r.MachineTypeDetails == "" || r.ServiceUserTokenDetails == "" {
			t.Errorf("%s: a value is missing: %+v", n, r)
		}
	}
	if status.DefaultRelease != release.Zed {
		t.Errorf("DefaultRelease = %q", status.DefaultRelease)
	}
}

// computeCell is a cell whose nova-compute services' oldest version is
// min (0: none).
type computeCell struct {
	status.Cell
	min int64
}

func (c computeCell) Name() string { return "cell1" }

func (c computeCell) ServiceVersionSummary(_ context.Context, binaries []string, threshold int64, _ int) ([]status.ServiceVersions, error) {
	if c.min == 0 {
		return nil, nil
	}
	sv := status.ServiceVersions{Binary: binaries[0], Count: 3, Min: c.min}
	if c.min < threshold {
		sv.Below = 1
	}
	return []status.ServiceVersions{sv}, nil
}

// TestOldComputesByRelease is _check_old_computes of each release, with
// the values read from its own code (docs/releases.md): Zed's nova-status
// supports computes from Yoga (61) on, 2025.1's from Caracal (66) on, so
// computes at 61-64 under a 2025.1 control plane fail, as Nova 31's
// nova-status says (issue 33).
func TestOldComputesByRelease(t *testing.T) {
	for _, tc := range []struct {
		release release.Name
		min     int64
		code    status.Code
		details string
	}{
		{"", 61, status.Success, ""},
		{release.Zed, 60, status.Failure, "Current Nova version does not support computes older than Yoga but the minimum compute service level in your system is 60 and the oldest supported service level is 61."},
		{release.Zed, 61, status.Success, ""},
		{release.Zed, 64, status.Success, ""},
		{release.R2025_1, 61, status.Failure, "Current Nova version does not support computes older than Caracal but the minimum compute service level in your system is 61 and the oldest supported service level is 66."},
		{release.R2025_1, 64, status.Failure, "Current Nova version does not support computes older than Caracal but the minimum compute service level in your system is 64 and the oldest supported service level is 66."},
		{release.R2025_1, 65, status.Failure, "Current Nova version does not support computes older than Caracal but the minimum compute service level in your system is 65 and the oldest supported service level is 66."},
		{release.R2025_1, 66, status.Success, ""},
		{release.R2025_1, 68, status.Success, ""},
		{release.R2025_1, 0, status.Success, ""},
		// The releases between, from their source (status.Releases' rows):
		// 2023.1 (Nova 27.5.1) still supports Yoga's computes; 2023.2 and
		// 2024.1 (28.3.1, 29.4.0) support Antelope (66) on, 2024.2 (30.3.0)
		// Caracal (66) on.
		{release.R2023_1, 61, status.Success, ""},
		{release.R2023_1, 60, status.Failure, "Current Nova version does not support computes older than Yoga but the minimum compute service level in your system is 60 and the oldest supported service level is 61."},
		{release.R2023_2, 64, status.Failure, "Current Nova version does not support computes older than Antelope but the minimum compute service level in your system is 64 and the oldest supported service level is 66."},
		{release.R2023_2, 66, status.Success, ""},
		{release.R2024_1, 65, status.Failure, "Current Nova version does not support computes older than Antelope but the minimum compute service level in your system is 65 and the oldest supported service level is 66."},
		{release.R2024_1, 67, status.Success, ""},
		{release.R2024_2, 64, status.Failure, "Current Nova version does not support computes older than Caracal but the minimum compute service level in your system is 64 and the oldest supported service level is 66."},
		{release.R2024_2, 66, status.Success, ""},
		{"2025.1", 64, status.Failure, "Current Nova version does not support computes older than Caracal but the minimum compute service level in your system is 64 and the oldest supported service level is 66."},
	} {
		env := &status.Env{Release: tc.release, Cells: []status.Cell{computeCell{min: tc.min}}, Upstream: status.Upstream{APIDatabase: true}}
		r := runOne(t, env, status.CheckOldComputes)
		if r.Code != tc.code || r.Details != tc.details {
			t.Errorf("%q, computes at %d: %v %q, want %v %q", tc.release, tc.min, r.Code, r.Details, tc.code, tc.details)
		}
	}
}

// TestMessagesByRelease: the texts that changed between the releases
// (nova/cmd/status.py: Zed :267 and :279, 2025.1 :267-269 and :279).
func TestMessagesByRelease(t *testing.T) {
	for _, tc := range []struct {
		release release.Name
		token   string
	}{
		{release.Zed, "\nService user token configuration is required for all Nova services.\nFor more details see the following:\nhttps://docs.openstack.org/latest/nova/admin/configuration/service-user-token.html"},
		{release.R2025_1, "\nService user token configuration is required for all Nova services.\nFor more details see the following:\nhttps://docs.openstack.org/nova/latest/admin/configuration/service-user-token.html"},
		// Nova 27.5.1-30.3.0: the /nova/latest/ link (nova commit 74a3139b93).
		{release.R2023_1, "\nService user token configuration is required for all Nova services.\nFor more details see the following:\nhttps://docs.openstack.org/nova/latest/admin/configuration/service-user-token.html"},
		{release.R2024_2, "\nService user token configuration is required for all Nova services.\nFor more details see the following:\nhttps://docs.openstack.org/nova/latest/admin/configuration/service-user-token.html"},
	} {
		r := runOne(t, &status.Env{Release: tc.release}, status.CheckServiceUserToken)
		if r.Code != status.Failure || r.Details != tc.token {
			t.Errorf("%s: %v %q, want Failure %q", tc.release, r.Code, r.Details, tc.token)
		}
	}
	// hw_machine_type unset names `nova-manage machine_type list_unset` up
	// to Nova 29 and `nova-manage libvirt list_unset_machine_type` from
	// Nova 30 (nova/cmd/status.py:267 of 29.4.0 and 30.3.0).
	for _, tc := range []struct {
		release release.Name
		command string
	}{
		{release.Zed, "`nova-manage machine_type list_unset`"},
		{release.R2023_1, "`nova-manage machine_type list_unset`"},
		{release.R2023_2, "`nova-manage machine_type list_unset`"},
		{release.R2024_1, "`nova-manage machine_type list_unset`"},
		{release.R2024_2, "`nova-manage libvirt list_unset_machine_type`"},
		{release.R2025_1, "`nova-manage libvirt list_unset_machine_type`"},
	} {
		r, err := status.LookupRelease(tc.release)
		if err != nil || !strings.Contains(r.MachineTypeDetails, tc.command) {
			t.Errorf("%s: %q, %v; want it to name %s", tc.release, r.MachineTypeDetails, err, tc.command)
		}
	}
	// placement-status' default policy file follows oslo.policy: 4.0.0 to
	// 4.4.0 (Zed to 2024.2's upper-constraints) policy.json, 4.5.1 policy.yaml.
	for _, n := range release.Names() {
		r, _ := status.LookupRelease(n)
		want := "policy.json"
		if n == release.R2025_1 {
			want = "policy.yaml"
		}
		if r.PlacementPolicyDefault != want {
			t.Errorf("%s: placement-status policy file %q, want %q", n, r.PlacementPolicyDefault, want)
		}
	}
}

// TestUnknownRelease: a release rpctl does not know fails every check
// that reads the row, never passes with another release's values.
func TestUnknownRelease(t *testing.T) {
	r := runOne(t, &status.Env{Release: "2025.2", Cells: []status.Cell{computeCell{min: 64}}}, status.CheckOldComputes)
	if r.Code != status.Failure || !r.Crashed && !r.Unreadable {
		t.Errorf("release 2025.2: %+v, want a failure with no verdict", r)
	}
	if _, err := status.LookupRelease("2025.2"); err == nil {
		t.Error("LookupRelease(2025.2) found a row")
	}
}

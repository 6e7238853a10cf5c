package standards

import (
	"slices"
	"testing"

	"github.com/rpctl/rpctl/internal/release"
)

func TestLists(t *testing.T) {
	for _, tc := range []struct {
		name  string
		list  []string
		n     int
		first string
	}{
		{"resource classes", ResourceClasses(), 21, "VCPU"},
		{"traits", Traits(), 345, "COMPUTE_ACCELERATORS"},
		{"zed traits", TraitsOf(release.Zed), 345, "COMPUTE_ACCELERATORS"},
		{"2023.1 traits", TraitsOf(release.R2023_1), 348, "COMPUTE_ACCELERATORS"},
		{"2023.2 traits", TraitsOf(release.R2023_2), 349, "COMPUTE_ACCELERATORS"},
		{"2024.1 traits", TraitsOf(release.R2024_1), 349, "COMPUTE_ACCELERATORS"},
		{"2024.2 traits", TraitsOf(release.R2024_2), 353, "COMPUTE_ACCELERATORS"},
		{"2025.1 traits", TraitsOf(release.R2025_1), 359, "COMPUTE_ACCELERATORS"},
	} {
		if len(tc.list) != tc.n || tc.list[0] != tc.first {
			t.Errorf("%s: %d entries starting %q, want %d starting %q", tc.name, len(tc.list), tc.list[0], tc.n, tc.first)
		}
	}
	if !slices.IsSorted(Traits()) {
		t.Error("traits are not sorted")
	}
	if !slices.Contains(Traits(), "MISC_SHARES_VIA_AGGREGATE") {
		t.Error("MISC_SHARES_VIA_AGGREGATE missing")
	}
}

// TestTraitsEveryRelease: every release rpctl knows has its os-traits list,
// sorted, and 2025.1's (os-traits 3.4.0) is Zed's (2.9.0) plus the 14 traits
// docs/releases.md names, none removed.
func TestTraitsEveryRelease(t *testing.T) {
	for _, rel := range release.Names() {
		if l := TraitsOf(rel); len(l) == 0 || !slices.IsSorted(l) {
			t.Errorf("%s: %d traits, sorted %v", rel, len(l), slices.IsSorted(l))
		}
	}
	var added, removed []string
	for _, n := range TraitsOf(release.R2025_1) {
		if !IsTraitOf(release.Zed, n) {
			added = append(added, n)
		}
	}
	for _, n := range TraitsOf(release.Zed) {
		if !IsTraitOf(release.R2025_1, n) {
			removed = append(removed, n)
		}
	}
	want := []string{
		"COMPUTE_ADDRESS_SPACE_EMULATED", "COMPUTE_ADDRESS_SPACE_PASSTHROUGH", "COMPUTE_NET_VIF_MODEL_IGB",
		"COMPUTE_NET_VIRTIO_PACKED", "COMPUTE_SECURITY_STATELESS_FIRMWARE", "COMPUTE_SECURITY_TPM_CRB",
		"COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT", "COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST",
		"COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER", "COMPUTE_SECURITY_TPM_TIS", "COMPUTE_SHARE_LOCAL_FS",
		"HW_CPU_X86_AMD_SEV_ES", "HW_PCI_LIVE_MIGRATABLE", "HW_PCI_ONE_TIME_USE",
	}
	if !slices.Equal(added, want) || len(removed) != 0 {
		t.Errorf("2025.1 adds %v and removes %v; want adds %v, removes none", added, removed, want)
	}
	// Each release adds to the one before and removes nothing: the traits
	// each os-traits release added (its git log), one row a release.
	added = nil
	for _, tc := range []struct {
		rel  release.Name
		adds []string
	}{
		{release.R2023_1, []string{"COMPUTE_ADDRESS_SPACE_EMULATED", "COMPUTE_ADDRESS_SPACE_PASSTHROUGH", "COMPUTE_SHARE_LOCAL_FS"}},
		{release.R2023_2, []string{"COMPUTE_NET_VIRTIO_PACKED"}},
		{release.R2024_1, nil},
		{release.R2024_2, []string{"COMPUTE_SECURITY_STATELESS_FIRMWARE", "COMPUTE_SECURITY_TPM_CRB", "COMPUTE_SECURITY_TPM_TIS", "HW_CPU_X86_AMD_SEV_ES"}},
	} {
		prev := release.Names()[slices.Index(release.Names(), tc.rel)-1]
		var got []string
		for _, n := range TraitsOf(tc.rel) {
			if !IsTraitOf(prev, n) {
				got = append(got, n)
			}
		}
		for _, n := range TraitsOf(prev) {
			if !IsTraitOf(tc.rel, n) {
				t.Errorf("%s removes %s", tc.rel, n)
			}
		}
		if !slices.Equal(got, tc.adds) {
			t.Errorf("%s adds %v to %s, want %v", tc.rel, got, prev, tc.adds)
		}
	}
	if IsTraitOf(release.Zed, "COMPUTE_NET_VIF_MODEL_IGB") || !IsTraitOf(release.R2025_1, "COMPUTE_NET_VIF_MODEL_IGB") {
		t.Error("COMPUTE_NET_VIF_MODEL_IGB: standard in 2025.1 only")
	}
	if !slices.Equal(Traits(), TraitsOf(release.Default)) || !slices.Equal(TraitsOf(""), Traits()) {
		t.Error("Traits() and TraitsOf(\"\") are not the default release's")
	}
}

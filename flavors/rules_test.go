package flavors

import (
	"slices"
	"testing"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
)

// TestRulesEveryRelease: every release rpctl knows has its row, and the
// rows say what each release's Nova does (Zed: Nova 26.2.2, 2025.1: Nova
// 31.0.0; TestParityWithNova and TestParityWithNova31 compare the requests
// built from them with those Novas' own ResourceRequest).
func TestRulesEveryRelease(t *testing.T) {
	for _, rel := range release.Names() {
		r, err := RulesOf(rel)
		if err != nil || r.Release != rel || len(r.VIFModels) == 0 || r.MemEncryptionNoUEFI == "" {
			t.Errorf("RulesOf(%s) = %+v, %v", rel, r, err)
		}
	}
	if _, err := RulesOf("2025.2"); err == nil {
		t.Error("RulesOf(2025.2): no error")
	}
	// Which release brought each rule (docs/releases.md: the nova commits
	// in RulesOf's rows), one row a release.
	for _, tc := range []struct {
		rel                                       release.Name
		tpmModel, maxPhys, stateless, packed, igb bool
		memEncVolume                              bool
	}{
		{release.Zed, false, false, false, false, false, false},
		{release.R2023_1, false, false, false, false, false, true},
		{release.R2023_2, false, false, false, false, false, true},
		{release.R2024_1, false, true, false, true, false, true},
		{release.R2024_2, true, true, true, true, false, true},
		{release.R2025_1, true, true, true, true, true, true},
	} {
		r, err := RulesOf(tc.rel)
		if err != nil {
			t.Fatal(err)
		}
		got := []bool{r.TPMModelTrait, r.MaxPhysAddr, r.StatelessFirmware, r.PackedVirtqueue, slices.Contains(r.VIFModels, "igb"), r.MemEncryptionNoUEFI == memEncNoUEFIVolume}
		want := []bool{tc.tpmModel, tc.maxPhys, tc.stateless, tc.packed, tc.igb, tc.memEncVolume}
		if !slices.Equal(got, want) {
			t.Errorf("%s: tpm model, maxphysaddr, stateless, packed, igb, volume message = %v, want %v", tc.rel, got, want)
		}
	}
	zed, _ := RulesOf(release.Zed)
	r25, _ := RulesOf(release.R2025_1)
	for _, tc := range []struct {
		name      string
		zed, r251 bool
	}{
		{"TPMModelTrait", zed.TPMModelTrait, r25.TPMModelTrait},
		{"MaxPhysAddr", zed.MaxPhysAddr, r25.MaxPhysAddr},
		{"StatelessFirmware", zed.StatelessFirmware, r25.StatelessFirmware},
		{"PackedVirtqueue", zed.PackedVirtqueue, r25.PackedVirtqueue},
		{"igb", slices.Contains(zed.VIFModels, "igb"), slices.Contains(r25.VIFModels, "igb")},
	} {
		if tc.zed || !tc.r251 {
			t.Errorf("%s: Zed %v, 2025.1 %v; want false, true", tc.name, tc.zed, tc.r251)
		}
	}
	if len(zed.VIFModels) != 12 || len(r25.VIFModels) != 13 {
		t.Errorf("VIF models: Zed %d, 2025.1 %d; want 12, 13", len(zed.VIFModels), len(r25.VIFModels))
	}
}

// TestBuildByRelease: the same flavor and image, built by each release's
// rules (the cases of the issue: vTPM model, maxphysaddr, stateless
// firmware, packed ring, igb).
func TestBuildByRelease(t *testing.T) {
	fl := &nova.Flavor{Name: "f", VCPUs: 2, MemoryMB: 2048, RootGB: 20, ExtraSpecs: map[string]string{
		"hw:tpm_version": "2.0", "hw:tpm_model": "tpm-crb", "hw:maxphysaddr_mode": "emulate", "hw:virtio_packed_ring": "true"}}
	img := &Image{Name: "img"}
	img.SetProperty("hw_firmware_stateless", "true")
	img.SetProperty("hw_firmware_type", "uefi")
	img.SetProperty("hw_vif_model", "igb")
	for _, rel := range []release.Name{release.Zed, release.R2023_1, release.R2023_2, release.R2024_1, release.R2024_2} {
		if _, err := Build(fl, img, Options{Release: rel, ImageMetadataPrefilter: true}); err == nil || err.Error() != "Field value igb is invalid" {
			t.Errorf("%s: igb: %v; want Nova's ValueError (igb came in Nova 31)", rel, err)
		}
	}
	img.SetProperty("hw_vif_model", "virtio")
	for _, tc := range []struct {
		rel  release.Name
		want string
	}{
		{release.Zed, "limit=1000&required=COMPUTE_SECURITY_TPM_2_0&resources=DISK_GB%3A20%2CMEMORY_MB%3A2048%2CVCPU%3A2&root_required=COMPUTE_NET_VIF_MODEL_VIRTIO%2C%21COMPUTE_STATUS_DISABLED"},
		{release.R2023_1, "limit=1000&required=COMPUTE_SECURITY_TPM_2_0&resources=DISK_GB%3A20%2CMEMORY_MB%3A2048%2CVCPU%3A2&root_required=COMPUTE_NET_VIF_MODEL_VIRTIO%2C%21COMPUTE_STATUS_DISABLED"},
		{release.R2023_2, "limit=1000&required=COMPUTE_SECURITY_TPM_2_0&resources=DISK_GB%3A20%2CMEMORY_MB%3A2048%2CVCPU%3A2&root_required=COMPUTE_NET_VIF_MODEL_VIRTIO%2C%21COMPUTE_STATUS_DISABLED"},
		// Nova 29: maxphysaddr and the packed ring; vTPM still the version only.
		{release.R2024_1, "limit=1000&required=COMPUTE_ADDRESS_SPACE_EMULATED%2CCOMPUTE_SECURITY_TPM_2_0&resources=DISK_GB%3A20%2CMEMORY_MB%3A2048%2CVCPU%3A2&root_required=COMPUTE_NET_VIF_MODEL_VIRTIO%2CCOMPUTE_NET_VIRTIO_PACKED%2C%21COMPUTE_STATUS_DISABLED"},
		// Nova 30: stateless firmware and the vTPM model, as Nova 31.
		{release.R2024_2, "limit=1000&required=COMPUTE_ADDRESS_SPACE_EMULATED%2CCOMPUTE_SECURITY_STATELESS_FIRMWARE%2CCOMPUTE_SECURITY_TPM_2_0%2CCOMPUTE_SECURITY_TPM_CRB&resources=DISK_GB%3A20%2CMEMORY_MB%3A2048%2CVCPU%3A2&root_required=COMPUTE_NET_VIF_MODEL_VIRTIO%2CCOMPUTE_NET_VIRTIO_PACKED%2C%21COMPUTE_STATUS_DISABLED"},
		{release.R2025_1, "limit=1000&required=COMPUTE_ADDRESS_SPACE_EMULATED%2CCOMPUTE_SECURITY_STATELESS_FIRMWARE%2CCOMPUTE_SECURITY_TPM_2_0%2CCOMPUTE_SECURITY_TPM_CRB&resources=DISK_GB%3A20%2CMEMORY_MB%3A2048%2CVCPU%3A2&root_required=COMPUTE_NET_VIF_MODEL_VIRTIO%2CCOMPUTE_NET_VIRTIO_PACKED%2C%21COMPUTE_STATUS_DISABLED"},
	} {
		r, err := Build(fl, img, Options{Limit: DefaultLimit, Release: tc.rel, ImageMetadataPrefilter: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.rel, err)
		}
		if q := r.QueryString(); q != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.rel, q, tc.want)
		}
	}
	if _, err := Build(fl, img, Options{Release: "2025.2"}); err == nil {
		t.Error("release 2025.2: no error")
	}
}

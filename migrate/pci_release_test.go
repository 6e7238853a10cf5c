package migrate

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/testdb"
)

// pciTraitTags are [pci] device_spec "traits" tags: standard traits of
// either release, spellings _normalize_traits upper-cases or normalises.
var pciTraitTags = []string{
	"HW_PCI_LIVE_MIGRATABLE", "hw_pci_live_migratable", "HW_PCI_ONE_TIME_USE,CUSTOM_A",
	"COMPUTE_NET_VIF_MODEL_IGB", "HW_CPU_X86_AVX2,x.y", "CUSTOM_lower", "foo-bar,,baz",
	"COMPUTE_SECURITY_TPM_CRB,HW_GPU_API_VULKAN",
}

// novaPCITraits runs a Nova's pci_placement_translator._get_traits_for_dev (the
// device provider's traits from a tag) on every tag; run executes python3
// with the program and stdin.
func novaPCITraits(t *testing.T, run func(program string, stdin []byte) ([]byte, error)) [][]string {
	t.Helper()
	in, _ := json.Marshal(pciTraitTags)
	out, err := run("import json, sys\nfrom nova.compute import pci_placement_translator as p\nprint(json.dumps([sorted(p._get_traits_for_dev({'traits': s})) for s in json.load(sys.stdin)]))", in)
	if err != nil {
		t.Fatalf("nova's get_traits: %v\n%s", err, out)
	}
	var got [][]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return got
}

func checkPCITraits(t *testing.T, rel release.Name, want [][]string) {
	t.Helper()
	for i, tag := range pciTraitTags {
		_, got := pciClassAndTraits(rel, nova.PCIDevice{VendorID: "8086", ProductID: "1563"}, map[string]string{"traits": tag})
		w := append([]string{TraitManagedPCI}, want[i]...)
		slices.Sort(w)
		w = slices.Compact(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: traits %q: rpctl %v, Nova %v", rel, tag, got, w)
		}
	}
}

// TestPCITraitsAsNovaByRelease: a device_spec traits tag becomes the
// traits each release's Nova gives the device provider (Zed: Nova 26.2.2
// on the host; 2025.1: Nova 31.0.0 in the chroot, where
// HW_PCI_LIVE_MIGRATABLE and the other new os-traits stay as they are).
func TestPCITraitsAsNovaByRelease(t *testing.T) {
	testdb.RequirePython(t, "nova.compute.pci_placement_translator")
	zed := novaPCITraits(t, func(program string, stdin []byte) ([]byte, error) {
		cmd := exec.Command(testdb.Python, "-c", program)
		cmd.Stdin = strings.NewReader(string(stdin))
		return cmd.Output()
	})
	checkPCITraits(t, release.Zed, zed)
	if os.Getenv("RPCTL_CHROOT_2025_1") == "" && !testdb.Required() {
		t.Log("RPCTL_CHROOT_2025_1 not set: the 2025.1 half is skipped")
		return
	}
	t.Run("2025.1", func(t *testing.T) {
		chroot := testdb.ReleaseChroot(t, "2025.1")
		dir := chroot.TempDir(t)
		r25 := novaPCITraits(t, func(program string, stdin []byte) ([]byte, error) {
			if err := os.WriteFile(filepath.Join(dir, "in.json"), stdin, 0o644); err != nil {
				return nil, err
			}
			return chroot.Command("/bin/sh", "-c", `exec python3 -c "$2" < "$1/in.json"`, "sh", dir, program).Output()
		})
		checkPCITraits(t, release.R2025_1, r25)
		differ := 0
		for i := range pciTraitTags {
			if !slices.Equal(zed[i], r25[i]) {
				differ++
			}
		}
		if differ == 0 {
			t.Error("Nova 26 and Nova 31 normalise every tag alike: the cases no longer exercise the new traits")
		}
		t.Logf("%d of %d tags give other traits in 2025.1", differ, len(pciTraitTags))
	})
}

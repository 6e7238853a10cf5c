package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

// TestProviderApplyAPIMatchesDatabase applies the same provider.yaml files
// through the Placement API (the real placement-api) on one copy and
// through the database on its twin: the output, and every GET body of the
// affected providers (inventories, traits, generations) and of the class
// and trait lists, must agree; applying again changes nothing on either.
func TestProviderApplyAPIMatchesDatabase(t *testing.T) {
	const (
		u1 = "11111111-1111-4111-8111-111111111111" // cn1: compute node
		u2 = "22222222-2222-4222-8222-222222222222" // cn2: compute node, named by uuid
		u3 = "33333333-3333-4333-8333-333333333333" // cn2_gpu: cn2's child, named by name
		u4 = "44444444-4444-4444-8444-444444444444" // storage: a root without COMPUTE_NODE
	)
	ctx := context.Background()
	viaAPI, viaDB := placementtest.New(t), placementtest.New(t)
	for _, pl := range []placementtest.Placement{viaAPI, viaDB} {
		c, err := placementclient.New(ctx, placementclient.Config{Endpoint: pl.Base, Auth: placementclient.StaticToken("admin")})
		if err != nil {
			t.Fatal(err)
		}
		st := placementclient.Store{C: c}
		must := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(st.CreateResourceClass(ctx, "CUSTOM_EXISTING"))
		must(st.CreateTrait(ctx, "CUSTOM_KEEP"))
		for _, p := range []inventory.ProviderSpec{{Name: "cn1", UUID: u1}, {Name: "cn2", UUID: u2}, {Name: "cn2_gpu", UUID: u3, ParentUUID: u2}, {Name: "storage", UUID: u4}} {
			must(st.CreateProvider(ctx, p))
		}
		must(st.SetProviderTraits(ctx, u1, 0, []string{"COMPUTE_NODE", "CUSTOM_KEEP"}))
		must(st.SetProviderTraits(ctx, u2, 0, []string{"COMPUTE_NODE"}))
		must(st.ReplaceInventories(ctx, u2, 1, map[string]inventory.Inventory{
			"VCPU":            {Total: 16, Reserved: 0, MinUnit: 1, MaxUnit: 16, StepSize: 1, AllocationRatio: 4},
			"CUSTOM_EXISTING": {Total: 3, Reserved: 0, MinUnit: 1, MaxUnit: 3, StepSize: 1, AllocationRatio: 1},
		}))
	}
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("meta:\n  schema_version: '1.0'\nproviders:\n"+body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("10-compute.yaml", `  - identification:
      uuid: '$COMPUTE_NODE'
    inventories:
      additional:
        - CUSTOM_LICENSE: {total: 4, reserved: 1, allocation_ratio: 1.1}
    traits:
      additional: [CUSTOM_RACK_A, CUSTOM_KEEP]
`)
	write("20-named.yaml", `  - identification:
      name: cn2_gpu
    inventories:
      additional:
        - CUSTOM_GPU: {total: 2, max_unit: 1}
    traits:
      additional: [CUSTOM_GPU_A100]
  - identification:
      uuid: '`+u4+`'
    inventories:
      additional:
        - CUSTOM_EXISTING: {total: 100, step_size: 10, min_unit: 10}
  - identification:
      name: ghost
    traits:
      additional: [CUSTOM_GHOST]
  - identification:
      uuid: '`+u2+`'
    inventories:
      additional:
        - CUSTOM_EXISTING: {total: 5}
        - CUSTOM_LICENSE: {total: 8}
    traits:
      additional: [CUSTOM_RACK_B]
`)
	apiFlags := []string{"--os-endpoint", viaAPI.Base, "--os-token", "admin"}
	dbFlags := []string{"--placement-db", viaDB.URL}
	apply := func(step, want string, extra ...string) {
		t.Helper()
		args := append([]string{"provider", "apply", "--file", dir}, extra...)
		aOut, aErr, aCode := cmdtest.Rpctl(t, append(slices.Clone(apiFlags), args...)...)
		dOut, dErr, dCode := cmdtest.Rpctl(t, append(slices.Clone(dbFlags), args...)...)
		if aCode != 0 || dCode != 0 {
			t.Fatalf("%s: exit %d through the API, %d on the database\nAPI: %s%s\ndatabase: %s%s", step, aCode, dCode, aOut, aErr, dOut, dErr)
		}
		if aOut != dOut || aErr != dErr {
			t.Errorf("%s: output differs\nAPI:\n%s%s\ndatabase:\n%s%s", step, aOut, aErr, dOut, dErr)
		}
		if !strings.Contains(aOut, want) {
			t.Errorf("%s: output lacks %q:\n%s", step, want, aOut)
		}
		if !strings.Contains(aErr, `name "ghost"`) {
			t.Errorf("%s: no warning about the unknown provider: %s", step, aErr)
		}
	}
	paths := []string{"/resource_classes", "/traits?name=startswith:CUSTOM_", "/resource_providers"}
	for _, u := range []string{u1, u2, u3, u4} {
		for _, sub := range []string{"", "/inventories", "/traits"} {
			paths = append(paths, "/resource_providers/"+u+sub)
		}
	}
	snapshot := func(step string) map[string]string {
		t.Helper()
		a, d := map[string]string{}, map[string]string{}
		for _, p := range paths {
			a[p], d[p] = getBody(t, viaAPI.Base, p), getBody(t, viaDB.Base, p)
			if a[p] != d[p] {
				t.Errorf("%s: GET %s differs\nthrough the API: %s\non the database: %s", step, p, a[p], d[p])
			}
		}
		return a
	}
	before := snapshot("before")
	apply("dry run", "Dry run: 4 provider(s)", "--dry-run")
	if after := snapshot("after the dry run"); !maps.Equal(before, after) {
		t.Errorf("--dry-run wrote something")
	}
	apply("apply", "4 provider(s) written, 0 unchanged")
	first := snapshot("apply")
	for _, want := range []string{`"CUSTOM_LICENSE"`, `"CUSTOM_GPU"`, `"CUSTOM_RACK_B"`, `"CUSTOM_GPU_A100"`} {
		if !strings.Contains(first["/resource_classes"]+first["/traits?name=startswith:CUSTOM_"], want) {
			t.Errorf("%s was not created", want)
		}
	}
	if strings.Contains(first["/traits?name=startswith:CUSTOM_"], "CUSTOM_GHOST") {
		t.Errorf("the skipped entry's trait was created")
	}
	if !strings.Contains(first["/resource_providers/"+u2+"/inventories"], `"VCPU"`) {
		t.Errorf("cn2 lost its VCPU inventory: %s", first["/resource_providers/"+u2+"/inventories"])
	}
	apply("apply again", "0 provider(s) written, 4 unchanged")
	if again := snapshot("apply again"); !maps.Equal(first, again) {
		for p := range first {
			if first[p] != again[p] {
				t.Errorf("applying again changed %s:\n%s\n%s", p, first[p], again[p])
			}
		}
	}
	out, _, _ := cmdtest.Rpctl(t, append(slices.Clone(apiFlags), "provider", "apply", "--file", dir)...)
	if !strings.Contains(out, "0 provider(s) written, 4 unchanged") {
		t.Errorf("a third apply through the API wrote something:\n%s", out)
	}
}

// getBody is a GET of the Placement API at 1.39, its JSON canonical (keys
// sorted, lists of names sorted).
func getBody(t *testing.T, base, path string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	sortNames(v)
	out, _ := json.Marshal(v)
	return fmt.Sprintf("%d %s", resp.StatusCode, out)
}

// sortNames sorts every list of strings (traits, classes by name) so that
// order Placement does not define cannot differ.
func sortNames(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			sortNames(e)
		}
	case []any:
		for _, e := range x {
			sortNames(e)
		}
		slices.SortFunc(x, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	}
}

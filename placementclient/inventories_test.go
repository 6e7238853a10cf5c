package placementclient_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/placementclient"
)

// TestInventoriesUnmarshal: a GET inventories answer decodes to the map,
// the generation and the classes in the answer's order (osc lists them
// so), and what is not an object of inventories is refused.
func TestInventoriesUnmarshal(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       placementclient.Inventories
		wantErr    bool
	}{
		{name: "ordered", body: `{"inventories": {"VCPU": {"total": 8, "allocation_ratio": 16.0}, "DISK_GB": {"total": 100, "reserved": 5}, "MEMORY_MB": {"total": 4096}}, "resource_provider_generation": 7}`,
			want: placementclient.Inventories{Generation: 7, Classes: []string{"VCPU", "DISK_GB", "MEMORY_MB"}, Inventories: map[string]placementclient.Inventory{
				"VCPU": {Total: 8, AllocationRatio: 16}, "DISK_GB": {Total: 100, Reserved: 5}, "MEMORY_MB": {Total: 4096}}}},
		{name: "generation first", body: `{"resource_provider_generation": 2, "inventories": {"MEMORY_MB": {"total": 1}, "VCPU": {"total": 2}}}`,
			want: placementclient.Inventories{Generation: 2, Classes: []string{"MEMORY_MB", "VCPU"}, Inventories: map[string]placementclient.Inventory{
				"MEMORY_MB": {Total: 1}, "VCPU": {Total: 2}}}},
		{name: "empty", body: `{"inventories": {}, "resource_provider_generation": 0}`,
			want: placementclient.Inventories{Inventories: map[string]placementclient.Inventory{}}},
		{name: "null", body: `{"inventories": null, "resource_provider_generation": 3}`, want: placementclient.Inventories{Generation: 3}},
		{name: "absent", body: `{"resource_provider_generation": 3}`, want: placementclient.Inventories{Generation: 3}},
		{name: "array", body: `{"inventories": [], "resource_provider_generation": 3}`, wantErr: true},
		{name: "bad total", body: `{"inventories": {"VCPU": {"total": "8"}}, "resource_provider_generation": 3}`, wantErr: true},
		{name: "bad generation", body: `{"inventories": {}, "resource_provider_generation": "x"}`, wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got placementclient.Inventories
			err := json.Unmarshal([]byte(c.body), &got)
			if c.wantErr {
				if err == nil {
					t.Fatalf("no error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Generation != c.want.Generation || !slices.Equal(got.Classes, c.want.Classes) || !reflect.DeepEqual(got.Inventories, c.want.Inventories) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

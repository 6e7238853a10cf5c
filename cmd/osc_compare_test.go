package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/placementclient"
)

// TestInventoryListMatchesOSC: `rpctl inventory list P` shows, for every
// column osc-placement has, the values `openstack resource provider
// inventory list P` shows — through the API and from the database.
func TestInventoryListMatchesOSC(t *testing.T) {
	osc, err := exec.LookPath("/usr/bin/openstack")
	if err != nil {
		if testdb.Required() {
			t.Fatal("openstack not installed (apt-get install python3-openstackclient python3-osc-placement)")
		}
		t.Skip("openstack not installed (apt-get install python3-openstackclient python3-osc-placement)")
	}
	my, c := cmdtest.LivePlacementDB(t)
	cmdtest.SmallCloud(t, c, 2)
	rps, err := c.ListProviders(context.Background(), placementclient.ProviderFilter{Name: "hosta"})
	if err != nil || len(rps) != 1 {
		t.Fatalf("hosta: %v %v", rps, err)
	}
	uuid := rps[0].UUID

	cmd := exec.Command(osc, "--os-endpoint", my.Base, "--os-token", "admin", "resource", "provider", "inventory", "list", uuid, "-f", "json")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OS_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openstack resource provider inventory list: %v\n%s", err, out)
	}
	var want []map[string]any
	if err := json.Unmarshal(out, &want); err != nil || len(want) != 2 {
		t.Fatalf("osc answered %s (%v)", out, err)
	}
	for _, args := range [][]string{
		{"--os-endpoint", my.Base, "--os-token", "admin"},
		{"--placement-db", my.URL},
	} {
		stdout, stderr, code := cmdtest.Rpctl(t, append(args, "-f", "json", "inventory", "list", "hosta")...)
		if code != 0 {
			t.Fatalf("rpctl %v: exit %d: %s", args, code, stderr)
		}
		var got []map[string]any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("rpctl %v: %v: %s", args, err, stdout)
		}
		byClass := map[string]map[string]any{}
		for _, r := range got {
			byClass[r["resource_class"].(string)] = r
		}
		if len(got) != len(want) {
			t.Fatalf("rpctl %v lists %d classes, osc %d", args, len(got), len(want))
		}
		for _, w := range want {
			g := byClass[w["resource_class"].(string)]
			for k, v := range w {
				if !reflect.DeepEqual(g[k], v) {
					t.Errorf("rpctl %v: %s %s = %v, osc shows %v", args[0], w["resource_class"], k, g[k], v)
				}
			}
		}
		if byClass["VCPU"]["used"] != float64(3) {
			t.Errorf("the comparison saw no usage: %v", byClass["VCPU"])
		}
	}
}

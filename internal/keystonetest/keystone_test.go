package keystonetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/placementclient"
)

// TestKeystone runs rpctl against a real Keystone and a placement-api that
// checks Keystone tokens: a clouds.yaml with password auth works through
// --os-cloud (token, then the Placement endpoint from the catalog), and a
// wrong password is one clear line.
func TestKeystone(t *testing.T) {
	ctx := context.Background()
	const pw = "s3cret-admin"
	my := placementtest.NewDB(t)
	port := testdb.FreePort(t)
	placementURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	ks := testdb.Keystone(t, pw, placementURL)
	testdb.PlacementAPIConf(t, my.URL, port, fmt.Sprintf(`
[keystone_authtoken]
www_authenticate_uri = %[1]s
auth_url = %[1]s
auth_type = password
username = admin
password = %[2]s
project_name = admin
user_domain_name = Default
project_domain_name = Default
`, ks, pw))

	// Placement now refuses a request without a Keystone token.
	if _, err := placementclient.New(ctx, placementclient.Config{Endpoint: placementURL, Auth: placementclient.StaticToken("admin")}); err != nil {
		t.Fatalf("GET / is open: %v", err)
	}
	noauth, _ := placementclient.New(ctx, placementclient.Config{Endpoint: placementURL, Auth: placementclient.StaticToken("admin")})
	if _, err := noauth.ListProviders(ctx, placementclient.ProviderFilter{}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a made-up token was accepted: %v", err)
	}

	dir := t.TempDir()
	clouds := filepath.Join(dir, "clouds.yaml")
	yaml := fmt.Sprintf(`clouds:
  test:
    auth:
      auth_url: %[1]s
      username: admin
      password: %[2]s
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
  wrong:
    auth:
      auth_url: %[1]s
      username: admin
      password: not-the-password
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
`, ks, pw)
	if err := os.WriteFile(clouds, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", clouds)
	for _, v := range []string{"OS_CLOUD", "OS_AUTH_URL", "OS_ENDPOINT", "OS_TOKEN", "OS_PASSWORD", "OS_USERNAME", "OS_REGION_NAME", "OS_INTERFACE"} {
		t.Setenv(v, "")
	}

	// Write a provider through the Keystone-authenticated client.
	c, err := placementclient.Connect(ctx, placementclient.ConnectOptions{Cloud: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != placementURL {
		t.Fatalf("endpoint from the catalog %s, want %s", c.Endpoint(), placementURL)
	}
	rp, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: "cn1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetInventories(ctx, rp.UUID, 0, map[string]placementclient.Inventory{
		"VCPU": {Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 4}}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range keystoneCases(rp.UUID) {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := rpctl(t, tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, want %d and %q\nstdout: %s\nstderr: %s", code, tc.code, tc.want, out, errOut)
			}
			if tc.code != 0 && strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("error is not one line: %q", errOut)
			}
		})
	}
}

type keystoneCase struct {
	name string
	args []string
	code int
	want string
}

func keystoneCases(uuid string) []keystoneCase {
	return []keystoneCase{
		{"inventory list through the catalog", []string{"--os-cloud", "test", "inventory", "list", "cn1"}, 0, "VCPU"},
		{"inventory list by uuid", []string{"--os-cloud", "test", "-f", "json", "inventory", "list", uuid}, 0, `"allocation_ratio": 4.0`},
		{"wrong password, inventory list", []string{"--os-cloud", "wrong", "inventory", "list", "cn1"}, 255,
			`Keystone (cloud "wrong") refused the credentials (401)`},
		{"compare through the catalog", []string{"--os-cloud", "test", "candidates", "--compare", "--resources", "VCPU:2"}, 0, "The answers agree."},
		{"wrong password", []string{"--os-cloud", "wrong", "candidates", "--compare", "--resources", "VCPU:2"}, 255,
			`Keystone (cloud "wrong") refused the credentials (401)`},
		{"no such region", []string{"--os-cloud", "test", "--os-region-name", "Nowhere", "candidates", "--compare", "--resources", "VCPU:2"}, 255,
			"no placement endpoint"},
	}
}

func rpctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	code := cmd.Run(context.Background(), ios, "test", args)
	return out.String(), errOut.String(), code
}

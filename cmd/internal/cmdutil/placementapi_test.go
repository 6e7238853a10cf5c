package cmdutil

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/iostreams"
)

func TestUsePlacementAPI(t *testing.T) {
	for _, v := range []string{"OS_CLOUD", "OS_AUTH_URL", "OS_ENDPOINT"} {
		t.Setenv(v, "")
	}
	for _, tc := range []struct {
		name string
		f    Factory
		env  string
		want bool
	}{
		{"nothing", Factory{}, "", false},
		{"--os-cloud", Factory{API: APIFlags{Cloud: "c"}}, "", true},
		{"--os-endpoint beats --db", Factory{Embedded: "x.db", API: APIFlags{Endpoint: "http://p"}}, "", true},
		{"OS_CLOUD alone", Factory{}, "OS_CLOUD", true},
		{"--db beats OS_CLOUD", Factory{Embedded: "x.db"}, "OS_CLOUD", false},
		{"--placement-db beats OS_AUTH_URL", Factory{PlacementDB: "mysql://x"}, "OS_AUTH_URL", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(tc.env, "x")
			}
			if got := tc.f.UsePlacementAPI(); got != tc.want {
				t.Errorf("UsePlacementAPI = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPlacementClientBadSettings: each way of naming the API wrongly gives
// one line saying what to fix, without contacting anything.
func TestPlacementClientBadSettings(t *testing.T) {
	dir := t.TempDir()
	clouds := filepath.Join(dir, "clouds.yaml")
	os.WriteFile(clouds, []byte("clouds:\n  other:\n    auth:\n      auth_url: http://127.0.0.1:1/v3\n"), 0o600)
	t.Setenv("OS_CLIENT_CONFIG_FILE", clouds)
	for _, v := range []string{"OS_CLOUD", "OS_AUTH_URL", "OS_ENDPOINT", "OS_TOKEN", "OS_PLACEMENT_API_VERSION"} {
		t.Setenv(v, "")
	}
	for _, tc := range []struct {
		api  APIFlags
		want string
	}{
		{APIFlags{Token: "admin"}, "--os-token needs --os-endpoint"},
		{APIFlags{Endpoint: "nope", Token: "admin"}, `invalid Placement endpoint "nope"`},
		{APIFlags{Cloud: "missing"}, "missing"},
		{APIFlags{Cloud: "other"}, "Keystone (cloud \"other\")"},
		// issue 21: not "Keystone: Missing input for argument [auth_url]".
		{APIFlags{Endpoint: "http://127.0.0.1:1/placement"}, "--os-endpoint needs --os-token"},
	} {
		ios, _, _, _ := iostreams.Test()
		f := NewFactory(ios)
		f.API = tc.api
		_, err := f.PlacementClient(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line containing %q", tc.api, err, tc.want)
		}
	}
}

package status_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpctl/rpctl/status"
)

func runOne(t *testing.T, env *status.Env, name string) status.Result {
	t.Helper()
	checks, err := status.Select(status.UpstreamChecks(env), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	rep := status.Run(context.Background(), checks[:1])
	return rep.Results[0]
}

func versions(v string, err error) status.VersionsFunc {
	return func(context.Context) (string, error) { return v, err }
}

// TestPlacementAPIRule is nova.cmd.status' _check_placement: each
// keystoneauth error has its text, a version below 1.36 fails, and an
// error nova-status does not name (the API down) is no verdict.
func TestPlacementAPIRule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       status.VersionsFunc
		code    status.Code
		details string
		broken  bool
	}{
		{"1.39", versions("1.39", nil), status.Success, "", false},
		{"1.36", versions("1.36", nil), status.Success, "", false},
		{"1.35", versions("1.35", nil), status.Failure, "Placement API version 1.36 needed, you have 1.35.", false},
		{"no credentials", versions("", status.ErrAPINoCredentials), status.Failure, "No credentials specified for placement API in nova.conf.", false},
		{"not wired", nil, status.Failure, "No credentials specified for placement API in nova.conf.", false},
		{"401", versions("", status.ErrAPIUnauthorized), status.Failure, "Placement service credentials do not work.", false},
		{"no endpoint", versions("", status.ErrAPIEndpointNotFound), status.Failure, "Placement API endpoint not found.", false},
		{"discovery", versions("", status.ErrAPIDiscoveryFailure), status.Failure, "Discovery for placement API URI failed.", false},
		{"404", versions("", status.ErrAPINotFound), status.Failure, "Placement API does not seem to be running.", false},
		{"down", versions("", errors.New("connection refused")), status.Failure, "Cannot reach the Placement API: connection refused", true},
	} {
		r := runOne(t, &status.Env{PlacementVersions: tc.v}, status.CheckPlacementAPI)
		if r.Code != tc.code || r.Details != tc.details || (r.Unreadable || r.Crashed) != tc.broken {
			t.Errorf("%s: %v %q (unreadable %v), want %v %q", tc.name, r.Code, r.Details, r.Unreadable, tc.code, tc.details)
		}
	}
}

// TestCinderAPIRule is _check_cinder: unconfigured passes, below 3.44
// fails, any error warns with its text.
func TestCinderAPIRule(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured bool
		v          status.VersionsFunc
		code       status.Code
		details    string
	}{
		{"not configured", false, versions("", errors.New("never asked")), status.Success, ""},
		{"3.70", true, versions("3.70", nil), status.Success, ""},
		{"3.44", true, versions("3.44", nil), status.Success, ""},
		{"3.40", true, versions("3.40", nil), status.Failure, "Cinder API 3.44 or greater is required. Deploy at least Cinder 12.0.0 (Queens)."},
		{"2.0", true, versions("2.0", nil), status.Failure, "Cinder API 3.44 or greater is required. Deploy at least Cinder 12.0.0 (Queens)."},
		{"down", true, versions("", errors.New("boom")), status.Warning, "Unable to determine Cinder API version due to error: boom"},
	} {
		env := &status.Env{CinderVersions: tc.v, Upstream: status.Upstream{CinderConfigured: tc.configured}}
		r := runOne(t, env, status.CheckCinderAPI)
		if r.Code != tc.code || r.Details != tc.details {
			t.Errorf("%s: %v %q, want %v %q", tc.name, r.Code, r.Details, tc.code, tc.details)
		}
	}
}

// TestCinderVersionDocument is nova.volume.cinder's reading of the
// endpoint and the version document.
func TestCinderVersionDocument(t *testing.T) {
	for in, want := range map[string]string{
		"http://cinder:8776/v3":              "http://cinder:8776/",
		"http://cinder:8776/v3/abc":          "http://cinder:8776/",
		"https://example.org/volume/v3/proj": "https://example.org/volume/",
	} {
		if got, err := status.CinderVersionURL(in); err != nil || got != want {
			t.Errorf("CinderVersionURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := status.CinderVersionURL("http://cinder:8776/v2/p"); err == nil {
		t.Error("a v2 endpoint was taken")
	}
	for doc, want := range map[string]string{
		`{"versions": [{"id": "v3.0", "version": "3.70", "min_version": "3.0"}]}`: "3.70",
		`{"versions": [{"id": "v3.0", "version": "3.71", "min_version": "3.0"}]}`: "3.70", // cinderclient's MAX_VERSION
		`{"versions": [{"id": "v2.0", "version": "", "min_version": ""}]}`:        "2.0",
	} {
		if got, err := status.CinderMaxVersion([]byte(doc)); err != nil || got != want {
			t.Errorf("CinderMaxVersion(%s) = %q, %v; want %q", doc, got, err, want)
		}
	}
	if _, err := status.CinderMaxVersion([]byte(`{}`)); err == nil {
		t.Error("a document without versions was read")
	}
}

// TestConfigChecks: the policy file and the service user token.
func TestConfigChecks(t *testing.T) {
	dir := t.TempDir()
	jsonFile, yamlFile := filepath.Join(dir, "p.json"), filepath.Join(dir, "p.yaml")
	os.WriteFile(jsonFile, []byte(`{"a": "role:admin"}`), 0o600)
	os.WriteFile(yamlFile, []byte("\"a\": \"role:admin\"\n"), 0o600)
	for _, tc := range []struct {
		up   status.Upstream
		want []status.Code // nova's policy check, service user token, placement's policy check (the checks' order)
	}{
		{status.Upstream{}, []status.Code{status.Success, status.Failure, status.Success}},
		{status.Upstream{NovaPolicyFile: jsonFile, PlacementPolicyFile: yamlFile, SendServiceUserToken: true}, []status.Code{status.Failure, status.Success, status.Success}},
		{status.Upstream{NovaPolicyFile: yamlFile, PlacementPolicyFile: jsonFile, SendServiceUserToken: true}, []status.Code{status.Success, status.Success, status.Failure}},
	} {
		checks, _ := status.Select(status.UpstreamChecks(&status.Env{Upstream: tc.up}), []string{status.CheckPolicyJSON, status.CheckServiceUserToken})
		rep := status.Run(context.Background(), checks)
		var got []status.Code
		for _, r := range rep.Results {
			got = append(got, r.Code)
		}
		if len(got) != 3 || got[0] != tc.want[0] || got[1] != tc.want[1] || got[2] != tc.want[2] {
			t.Errorf("%+v: %v, want %v", tc.up, got, tc.want)
		}
	}
}

// TestSelectTools: a tool's name selects its checks, in order.
func TestSelectTools(t *testing.T) {
	all := status.Checks(&status.Env{})
	for tool, n := range map[string]int{"nova-status": 7, "placement-status": 3, "rpctl": len(all) - 10} {
		got, err := status.Select(all, []string{tool})
		if err != nil || len(got) != n {
			t.Errorf("--check %s: %d checks, %v; want %d", tool, len(got), err, n)
		}
	}
	if all[0].Name != status.CheckCellsV2 || all[7].Name != status.CheckMissingRootIDs || all[10].Name != status.CheckComputeNodeUUIDs {
		t.Errorf("order: %s, %s, %s", all[0].Name, all[7].Name, all[10].Name)
	}
}

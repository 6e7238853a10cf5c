package shared

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/status"
)

// TestCinderVersions: the version document is read where nova.volume.cinder
// reads it, with the token; what goes wrong is an error (the check warns).
func TestCinderVersions(t *testing.T) {
	var gotPath, gotToken string
	doc := `{"versions": [{"id": "v3.0", "status": "CURRENT", "version": "3.59", "min_version": "3.0"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotToken = r.URL.Path, r.Header.Get("X-Auth-Token")
		if strings.HasPrefix(r.URL.Path, "/broken") {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, doc)
	}))
	defer srv.Close()
	up := config.Upstream{Cinder: config.APIAuth{AuthType: "admin_token", Token: "tok", Endpoint: srv.URL + "/volume/v3/p1"}}
	v, err := CinderVersions(up)(context.Background())
	if err != nil || v != "3.59" || gotPath != "/volume/" || gotToken != "tok" {
		t.Errorf("got %q, %v (GET %s, token %q)", v, err, gotPath, gotToken)
	}
	up.CinderEndpointTemplate = srv.URL + "/broken/v3"
	if _, err := CinderVersions(up)(context.Background()); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("a 500: %v", err)
	}
	up.CinderEndpointTemplate = srv.URL + "/v2"
	if _, err := CinderVersions(up)(context.Background()); err == nil || !strings.Contains(err.Error(), "It must include one of: v3") {
		t.Errorf("a v2 endpoint: %v", err)
	}
}

// TestPlacementVersions: nova.conf's [placement] without auth_type is
// "no credentials"; a 404 and a 401 are told apart.
func TestPlacementVersions(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/missing"):
			http.NotFound(w, r)
		case r.Header.Get("X-Auth-Token") != "admin":
			w.WriteHeader(http.StatusUnauthorized)
		default:
			fmt.Fprint(w, `{"versions": [{"id": "v1.0", "min_version": "1.0", "max_version": "1.39", "status": "CURRENT"}]}`)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		auth config.APIAuth
		want string
		err  error
	}{
		{config.APIAuth{}, "", status.ErrAPINoCredentials},
		{config.APIAuth{AuthType: "admin_token", Token: "admin", Endpoint: srv.URL}, "1.39", nil},
		{config.APIAuth{AuthType: "admin_token", Token: "admin", Endpoint: "http://nowhere.invalid", EndpointOverride: srv.URL}, "1.39", nil},
		{config.APIAuth{AuthType: "admin_token", Token: "admin", Endpoint: srv.URL + "/missing"}, "", status.ErrAPINotFound},
		{config.APIAuth{AuthType: "admin_token", Token: "wrong", Endpoint: srv.URL}, "", status.ErrAPIUnauthorized},
	} {
		v, err := PlacementVersions(tc.auth)(context.Background())
		if v != tc.want || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%+v: %q, %v; want %q, %v", tc.auth, v, err, tc.want, tc.err)
		}
	}
}

// TestUpstreamConfigPolicyDefaults: with no [oslo_policy] policy_file,
// each tool looks for its release's default name beside the config
// files: nova-status policy.yaml in both releases; placement-status
// policy.json in Zed (oslo.policy 4.0.0) and policy.yaml in 2025.1
// (oslo.policy 4.5.1, oslo_policy/opts.py:60).
func TestUpstreamConfigPolicyDefaults(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nova.conf")
	for _, name := range []string{"nova.conf", "policy.json", "policy.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := config.Options{Files: []string{conf}}
	for _, tc := range []struct {
		release         release.Name
		nova, placement string
	}{
		{"", "policy.yaml", "policy.json"},
		{release.Zed, "policy.yaml", "policy.json"},
		{release.R2025_1, "policy.yaml", "policy.yaml"},
	} {
		up := UpstreamConfig(o, true, tc.release)
		if filepath.Base(up.NovaPolicyFile) != tc.nova || filepath.Base(up.PlacementPolicyFile) != tc.placement {
			t.Errorf("%q: nova %q, placement %q; want %s, %s", tc.release, up.NovaPolicyFile, up.PlacementPolicyFile, tc.nova, tc.placement)
		}
	}
}

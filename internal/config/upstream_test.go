package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestUpstreamOptions: what nova-status and placement-status read from
// nova.conf, and oslo.config's find_file.
func TestUpstreamOptions(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nova.conf")
	os.WriteFile(conf, []byte(`[service_user]
send_service_user_token = True
[oslo_policy]
policy_file = mypolicy.json
[placement]
auth_type = password
auth_url = http://ks:5000/v3
username = placement
password = pw
project_name = service
user_domain_name = Default
project_domain_name = Default
valid_interfaces = internal, public
[cinder]
auth_type = admin_token
endpoint_template = http://cinder:8776/v3/%(project_id)s
`), 0o600)
	o, err := LoadFiles([]string{conf})
	if err != nil {
		t.Fatal(err)
	}
	u := o.Upstream
	if !u.SendServiceUserToken || u.PolicyFile.Value != "mypolicy.json" || u.Cinder.AuthType != "admin_token" ||
		u.CinderEndpointTemplate != "http://cinder:8776/v3/%(project_id)s" || u.CinderCatalogInfo != "volumev3::publicURL" {
		t.Errorf("upstream options %+v", u)
	}
	want := APIAuth{AuthType: "password", AuthURL: "http://ks:5000/v3", Username: "placement", Password: "pw", ProjectName: "service",
		UserDomainName: "Default", ProjectDomainName: "Default", ValidInterfaces: []string{"internal", "public"}, Source: u.Placement.Source}
	if !reflect.DeepEqual(u.Placement, want) {
		t.Errorf("[placement] %+v, want %+v", u.Placement, want)
	}
	if FindFile("mypolicy.json", o.Files, "nova") != "" {
		t.Error("found a file that is not there")
	}
	os.WriteFile(filepath.Join(dir, "mypolicy.json"), []byte("{}"), 0o600)
	if got := FindFile("mypolicy.json", o.Files, "nova"); got != filepath.Join(dir, "mypolicy.json") {
		t.Errorf("FindFile beside the config file: %q", got)
	}
	if _, err := LoadFiles([]string{writeConf(t, "[service_user]\nsend_service_user_token = maybe\n")}); err == nil {
		t.Error("a bad boolean was taken")
	}
}

func writeConf(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "x.conf")
	os.WriteFile(p, []byte(body), 0o600)
	return p
}

package config

import (
	"os"
	"path/filepath"
	"strings"
)

// Upstream are the options nova-status and placement-status read beyond
// the databases: where the policy file is, whether Nova sends service
// tokens, and how Nova reaches the Placement and Cinder APIs.
type Upstream struct {
	// PolicyFile is [oslo_policy] policy_file, "" when unset (each tool
	// has its own default).
	PolicyFile Setting
	// SendServiceUserToken is [service_user] send_service_user_token
	// (False by default).
	SendServiceUserToken bool
	// Placement and Cinder are nova.conf's [placement] and [cinder]
	// keystoneauth sections.
	Placement, Cinder APIAuth
	// CinderCatalogInfo is [cinder] catalog_info
	// (service_type:service_name:interface), CinderEndpointTemplate
	// [cinder] endpoint_template, CinderRegion [cinder] os_region_name.
	CinderCatalogInfo, CinderEndpointTemplate, CinderRegion string
}

// APIAuth is a keystoneauth section of nova.conf ([placement], [cinder]):
// the auth plugin and its options, and the adapter's endpoint options.
type APIAuth struct {
	// AuthType is the plugin ("password", "v3password", "admin_token",
	// "none", ...), "" when the section names none.
	AuthType                                                                    string
	AuthURL, Username, Password, ProjectName, UserDomainName, ProjectDomainName string
	// Endpoint and Token are the admin_token plugin's options.
	Endpoint, Token string
	// EndpointOverride skips the service catalog; RegionName and
	// ValidInterfaces select the catalog entry.
	EndpointOverride, RegionName string
	ValidInterfaces              []string
	// Source names where auth_type came from, for messages.
	Source string
}

// readUpstream fills o.Upstream and o.Files from the parsed files.
func readUpstream(get func(section, key string) (string, string, bool), o *Options) error {
	u := &o.Upstream
	if v, src, ok := get("oslo_policy", "policy_file"); ok && v != "" {
		u.PolicyFile = Setting{Value: v, Source: src}
	}
	if v, src, ok := get("service_user", "send_service_user_token"); ok && v != "" {
		b, err := parseBool(v, src+": [service_user] send_service_user_token")
		if err != nil {
			return err
		}
		u.SendServiceUserToken = b
	}
	auth := func(section string) APIAuth {
		s := func(key string) string { v, _, _ := get(section, key); return strings.TrimSpace(v) }
		a := APIAuth{
			AuthURL: s("auth_url"), Username: s("username"), Password: s("password"), ProjectName: s("project_name"),
			UserDomainName: s("user_domain_name"), ProjectDomainName: s("project_domain_name"),
			Endpoint: s("endpoint"), Token: s("token"), EndpointOverride: s("endpoint_override"), RegionName: s("region_name"),
		}
		if v, src, ok := get(section, "auth_type"); ok && strings.TrimSpace(v) != "" {
			a.AuthType, a.Source = strings.TrimSpace(v), src
		} else if v, src, ok := get(section, "auth_plugin"); ok && strings.TrimSpace(v) != "" {
			// keystoneauth's deprecated name of auth_type.
			a.AuthType, a.Source = strings.TrimSpace(v), src
		}
		if a.UserDomainName == "" {
			a.UserDomainName = s("user_domain_id")
		}
		if a.ProjectDomainName == "" {
			a.ProjectDomainName = s("project_domain_id")
		}
		for _, i := range strings.Split(s("valid_interfaces"), ",") {
			if i = strings.TrimSpace(i); i != "" {
				a.ValidInterfaces = append(a.ValidInterfaces, i)
			}
		}
		return a
	}
	u.Placement, u.Cinder = auth("placement"), auth("cinder")
	s := func(section, key string) string { v, _, _ := get(section, key); return strings.TrimSpace(v) }
	u.CinderCatalogInfo = s("cinder", "catalog_info")
	if u.CinderCatalogInfo == "" {
		u.CinderCatalogInfo = "volumev3::publicURL" // nova/conf/cinder.py
	}
	u.CinderEndpointTemplate = s("cinder", "endpoint_template")
	u.CinderRegion = s("cinder", "os_region_name")
	return nil
}

func parseBool(v, what string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	return false, &boolError{what: what, v: v}
}

type boolError struct{ what, v string }

func (e *boolError) Error() string { return e.what + ": expected a boolean, got \"" + e.v + "\"" }

// FindFile is oslo.config's ConfigOpts.find_file: name (the policy file,
// say) looked up in the directories of the config files read, the last
// file's first, then in the project's standard directories (~/.project,
// ~, /etc/project, /etc). An absolute name is itself. "" when no file is
// there.
func FindFile(name string, files []string, project string) string {
	var dirs []string
	for i := len(files) - 1; i >= 0; i-- {
		if abs, err := filepath.Abs(files[i]); err == nil {
			dirs = append(dirs, filepath.Dir(abs))
		}
	}
	home, _ := os.UserHomeDir()
	if home != "" {
		dirs = append(dirs, filepath.Join(home, "."+project), home)
	}
	dirs = append(dirs, filepath.Join("/etc", project), "/etc")
	for _, d := range dirs {
		p := name
		if !filepath.IsAbs(name) {
			p = filepath.Join(d, name)
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

package cmdutil

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/internal/logging"
	"github.com/rpctl/rpctl/placementclient"
)

// APIFlags name a live Placement API, as python-openstackclient's global
// options do. Given, they select the API over the database flags.
type APIFlags struct {
	Cloud        string
	RegionName   string
	Interface    string
	Endpoint     string
	Token        string
	Microversion string
	// Keystone credentials, as openstackclient's --os-* options (used
	// when no --os-cloud names a clouds.yaml entry; OS_* fill the rest).
	Keystone placementclient.KeystoneAuth
}

func AddAPIFlags(pf *pflag.FlagSet, a *APIFlags) {
	pf.StringVar(&a.Cloud, "os-cloud", "", "use the Placement API of this clouds.yaml cloud (Env: OS_CLOUD)")
	pf.StringVar(&a.RegionName, "os-region-name", "", "region of the Placement endpoint in the service catalog (Env: OS_REGION_NAME)")
	pf.StringVar(&a.Interface, "os-interface", "", "public, internal or admin endpoint from the service catalog (Env: OS_INTERFACE; default public)")
	pf.StringVar(&a.Endpoint, "os-endpoint", "", "Placement API URL, bypassing the service catalog (Env: OS_ENDPOINT)")
	pf.StringVar(&a.Token, "os-token", "", "token for --os-endpoint, skipping Keystone (noauth2 services take any value; Env: OS_TOKEN)")
	pf.StringVar(&a.Microversion, "os-placement-api-version", "", "Placement microversion to send (default: the highest both sides know, up to 1.39; Env: OS_PLACEMENT_API_VERSION)")
	k := &a.Keystone
	pf.StringVar(&k.AuthURL, "os-auth-url", "", "Keystone URL, without --os-cloud (Env: OS_AUTH_URL)")
	pf.StringVar(&k.Username, "os-username", "", "Keystone user name (Env: OS_USERNAME)")
	pf.StringVar(&k.Password, "os-password", "", "Keystone password (Env: OS_PASSWORD; never printed)")
	pf.StringVar(&k.ProjectName, "os-project-name", "", "Keystone project to scope to (Env: OS_PROJECT_NAME)")
	pf.StringVar(&k.UserDomainName, "os-user-domain-name", "", "the user's domain (Env: OS_USER_DOMAIN_NAME)")
	pf.StringVar(&k.ProjectDomainName, "os-project-domain-name", "", "the project's domain (Env: OS_PROJECT_DOMAIN_NAME)")
	pf.StringVar(&k.ApplicationCredentialID, "os-application-credential-id", "", "Keystone application credential id (Env: OS_APPLICATION_CREDENTIAL_ID)")
	pf.StringVar(&k.ApplicationCredentialSecret, "os-application-credential-secret", "", "Keystone application credential secret (Env: OS_APPLICATION_CREDENTIAL_SECRET; never printed)")
	MarkSecretFlags(pf, "value", "os-token", "os-password", "os-application-credential-secret")
}

// UsePlacementAPI reports whether the command should work through the
// Placement API: --os-cloud or --os-endpoint was given, or no database was
// named and the environment points at a cloud (OS_CLOUD or OS_AUTH_URL).
func (f *Factory) UsePlacementAPI() bool {
	if f.API.Cloud != "" || f.API.Endpoint != "" || f.API.Keystone.AuthURL != "" {
		return true
	}
	if f.Embedded != "" || f.PlacementDB != "" {
		return false
	}
	if f.configPlacementAPI() {
		return true
	}
	if len(f.ConfigFiles) > 0 {
		return false
	}
	return os.Getenv("OS_CLOUD") != "" || os.Getenv("OS_AUTH_URL") != "" || os.Getenv("OS_ENDPOINT") != ""
}

// configPlacementAPI reports whether the config files name Placement only
// by its API: a controller's nova.conf, with [placement] credentials
// (auth_type) and no [placement_database] connection in any file read.
// Commands then work through that API, as nova-compute and nova-status
// reach Placement.
func (f *Factory) configPlacementAPI() bool {
	if f.Embedded != "" || f.PlacementDB != "" {
		return false
	}
	o, err := f.Options()
	return err == nil && o.PlacementDB.Value == "" && o.Upstream.Placement.AuthType != ""
}

// PlacementClient connects to the Placement API the flags (or OS_*
// variables) name, once per run.
func (f *Factory) PlacementClient(ctx context.Context) (*placementclient.Client, error) {
	if f.placement != nil || f.placementErr != nil {
		return f.placement, f.placementErr
	}
	if f.API.Cloud == "" && f.API.Endpoint == "" && f.API.Keystone.AuthURL == "" && f.configPlacementAPI() {
		// nova.conf's [placement], as nova-compute reaches Placement.
		o, _ := f.Options()
		co := placementclient.ConfigOptions{}
		if logging.Debug() {
			co.Logger = logging.Logger()
		}
		f.placement, f.placementErr = placementclient.FromConfig(ctx, o.Upstream.Placement, co)
		if f.placementErr != nil {
			f.placementErr = fmt.Errorf("the Placement API [placement] names (%s): %w", o.Upstream.Placement.Source, f.placementErr)
		}
		return f.placement, f.placementErr
	}
	a := f.API
	env := func(v *string, name string) {
		if *v == "" {
			*v = os.Getenv(name)
		}
	}
	env(&a.Endpoint, "OS_ENDPOINT")
	env(&a.Token, "OS_TOKEN")
	env(&a.Microversion, "OS_PLACEMENT_API_VERSION")
	o := placementclient.ConnectOptions{
		Cloud: a.Cloud, RegionName: a.RegionName, Interface: a.Interface,
		Endpoint: a.Endpoint, Token: a.Token, Microversion: a.Microversion,
		Keystone: a.Keystone,
	}
	if logging.Debug() {
		// --debug: every request through rpctl's logger (redacted records).
		o.Logger = logging.Logger()
	}
	f.placement, f.placementErr = placementclient.Connect(ctx, o)
	return f.placement, f.placementErr
}

// DatabaseBelow tells whether the database backend is asked to answer as
// Placement does below microversion 1.minor (--os-placement-api-version,
// or OS_PLACEMENT_API_VERSION): the API answers at the version asked for
// itself, so this is false there, and false when no version was asked for
// (the database answers as the latest microversion).
func (f *Factory) DatabaseBelow(minor int) bool {
	if f.UsePlacementAPI() || f.API.Microversion == "" || f.API.Microversion == "latest" {
		return false
	}
	v, err := placementclient.ParseVersion(f.API.Microversion)
	return err == nil && !v.AtLeast(minor)
}

package placementclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/utils/v2/openstack/clientconfig"
)

// ConnectOptions are the operator's ways of naming a Placement service, as
// python-openstackclient has them: a clouds.yaml entry (--os-cloud) or the
// OS_* variables for Keystone, or --os-endpoint with --os-token for a
// noauth2 service.
type ConnectOptions struct {
	Cloud      string
	RegionName string
	Interface  string
	// Endpoint overrides the catalog; with Token it skips Keystone.
	Endpoint     string
	Token        string
	Microversion string
	Timeout      time.Duration
	Logger       *slog.Logger
	// Keystone are credentials given as options rather than a clouds.yaml
	// entry; used without Cloud, the OS_* variables fill what is empty.
	Keystone KeystoneAuth
}

// KeystoneAuth are openstackclient's --os-* credential options.
type KeystoneAuth struct {
	AuthURL, Username, Password, ProjectName, UserDomainName, ProjectDomainName string
	ApplicationCredentialID, ApplicationCredentialSecret                        string
}

func (k KeystoneAuth) authInfo() (*clientconfig.AuthInfo, clientconfig.AuthType) {
	if k == (KeystoneAuth{}) {
		return nil, ""
	}
	var t clientconfig.AuthType
	if k.ApplicationCredentialID != "" || k.ApplicationCredentialSecret != "" {
		t = clientconfig.AuthV3ApplicationCredential
	}
	return &clientconfig.AuthInfo{
		AuthURL: k.AuthURL, Username: k.Username, Password: k.Password, ProjectName: k.ProjectName,
		UserDomainName: k.UserDomainName, ProjectDomainName: k.ProjectDomainName,
		ApplicationCredentialID: k.ApplicationCredentialID, ApplicationCredentialSecret: k.ApplicationCredentialSecret,
	}, t
}

// Connect authenticates (unless a token and endpoint are given), finds
// Placement in the service catalog, and negotiates the microversion.
func Connect(ctx context.Context, o ConnectOptions) (*Client, error) {
	cfg := Config{Endpoint: o.Endpoint, Microversion: o.Microversion, Timeout: o.Timeout, Logger: o.Logger}
	if o.Token != "" {
		if o.Endpoint == "" {
			return nil, errors.New("--os-token needs --os-endpoint (the Placement URL): a token alone names no service")
		}
		cfg.Auth = StaticToken(o.Token)
		return New(ctx, cfg)
	}
	if o.Endpoint != "" && o.Cloud == "" && o.Keystone.AuthURL == "" && os.Getenv("OS_AUTH_URL") == "" && os.Getenv("OS_CLOUD") == "" {
		return nil, errors.New("--os-endpoint needs --os-token (a noauth2 Placement takes any value) or Keystone credentials (--os-cloud, or --os-auth-url with a user or application credential) to get one")
	}
	info, authType := o.Keystone.authInfo()
	sc, err := clientconfig.NewServiceClient(ctx, "placement", &clientconfig.ClientOpts{
		Cloud:        o.Cloud,
		AuthInfo:     info,
		AuthType:     authType,
		RegionName:   o.RegionName,
		EndpointType: o.Interface,
	})
	if err != nil {
		return nil, keystoneError(o, err)
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = sc.Endpoint
	}
	hc := sc.ProviderClient.HTTPClient
	cfg.HTTPClient = &hc
	cfg.Auth = sc.ProviderClient
	return New(ctx, cfg)
}

var _ Auth = (*gophercloud.ProviderClient)(nil)

// Keystone's answers that callers tell apart (nova-status names them).
var (
	// ErrKeystoneRefused is Keystone refusing the credentials (401).
	ErrKeystoneRefused = errors.New("credentials refused by Keystone")
	// ErrNoEndpoint is a service catalog without the placement endpoint.
	ErrNoEndpoint = errors.New("no placement endpoint in the service catalog")
)

// keystoneError turns gophercloud's answer into one line an operator can
// act on.
func keystoneError(o ConnectOptions, err error) error {
	where := "Keystone"
	if o.Cloud != "" {
		where = fmt.Sprintf("Keystone (cloud %q)", o.Cloud)
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		switch ue.Actual {
		case http.StatusUnauthorized:
			return fmt.Errorf("%s refused the credentials (401): check the user name, password, project and domains%w", where, quiet{ErrKeystoneRefused})
		case http.StatusForbidden:
			return fmt.Errorf("%s answered 403 Forbidden to %s", where, ue.URL)
		}
		return fmt.Errorf("%s answered %d to %s %s", where, ue.Actual, ue.Method, ue.URL)
	}
	var nf gophercloud.ErrEndpointNotFound
	if errors.As(err, &nf) || strings.Contains(err.Error(), "No suitable endpoint") {
		return fmt.Errorf("%s: the service catalog has no placement endpoint for interface %q region %q (try --os-interface, --os-region-name or --os-endpoint)%w", where, orDefault(o.Interface, "public"), o.RegionName, quiet{ErrNoEndpoint})
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	return fmt.Errorf("%s: %s", where, msg)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// quiet wraps a sentinel for errors.Is without adding to the message.
type quiet struct{ err error }

func (q quiet) Error() string { return "" }
func (q quiet) Unwrap() error { return q.err }

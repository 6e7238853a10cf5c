package placementclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
	sc, err := clientconfig.NewServiceClient(ctx, "placement", &clientconfig.ClientOpts{
		Cloud:        o.Cloud,
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
			return fmt.Errorf("%s refused the credentials (401): check the user name, password, project and domains", where)
		case http.StatusForbidden:
			return fmt.Errorf("%s answered 403 Forbidden to %s", where, ue.URL)
		}
		return fmt.Errorf("%s answered %d to %s %s", where, ue.Actual, ue.Method, ue.URL)
	}
	var nf gophercloud.ErrEndpointNotFound
	if errors.As(err, &nf) || strings.Contains(err.Error(), "No suitable endpoint") {
		return fmt.Errorf("%s: the service catalog has no placement endpoint for interface %q region %q (try --os-interface, --os-region-name or --os-endpoint)", where, orDefault(o.Interface, "public"), o.RegionName)
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

package placementclient

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/rpctl/rpctl/internal/config"
)

// Why nova.conf's [placement] cannot name a Placement API: keystoneauth's
// MissingAuthPlugin, and no endpoint for a token plugin.
var (
	ErrConfigNoAuth     = errors.New("nova.conf's [placement] names no auth_type")
	ErrConfigNoEndpoint = errors.New("nova.conf's [placement] names no endpoint (endpoint_override, or endpoint with auth_type = admin_token)")
)

// ConfigOptions tune a client made from nova.conf's [placement].
type ConfigOptions struct {
	// NoRetries sends each request once: a dead API is told at once (the
	// upgrade checks), not after the backoff a migration wants.
	NoRetries bool
	Timeout   time.Duration
	Logger    *slog.Logger
}

// FromConfig connects to the Placement API nova.conf's [placement] names,
// as nova-status and nova-compute reach it (keystoneauth): an auth_type
// with Keystone credentials (the catalog's endpoint for region_name and
// valid_interfaces, or endpoint_override), or admin_token (and the other
// token plugins) with endpoint or endpoint_override and token.
func FromConfig(ctx context.Context, a config.APIAuth, o ConfigOptions) (*Client, error) {
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	switch a.AuthType {
	case "":
		return nil, ErrConfigNoAuth
	case "admin_token", "token_endpoint", "none", "noauth":
		endpoint := a.EndpointOverride
		if endpoint == "" {
			endpoint = a.Endpoint
		}
		if endpoint == "" {
			return nil, ErrConfigNoEndpoint
		}
		cfg := Config{Endpoint: endpoint, Auth: StaticToken(a.Token), Timeout: o.Timeout, Logger: o.Logger}
		if o.NoRetries {
			cfg.Retries = -1
		}
		return New(ctx, cfg)
	default:
		iface := ""
		if len(a.ValidInterfaces) > 0 {
			iface = a.ValidInterfaces[0]
		}
		return Connect(ctx, ConnectOptions{Endpoint: a.EndpointOverride, RegionName: a.RegionName, Interface: iface,
			Timeout: o.Timeout, Logger: o.Logger, Keystone: KeystoneAuth{AuthURL: a.AuthURL, Username: a.Username, Password: a.Password,
				ProjectName: a.ProjectName, UserDomainName: a.UserDomainName, ProjectDomainName: a.ProjectDomainName}})
	}
}

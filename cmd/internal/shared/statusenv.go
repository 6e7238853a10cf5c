package shared

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/osapi"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// StatusWiring is what the upgrade checks read, opened: close it when the
// checks have run.
type StatusWiring struct {
	Env    *status.Env
	closes []func()
}

// Close closes every database opened for the checks.
func (w *StatusWiring) Close() {
	for _, c := range w.closes {
		c()
	}
}

// WireStatus opens what env's checks read, as rpctl status and the
// exporter both run them: the cells and Placement databases (one that
// cannot be opened is the error of the checks that need it), the API
// database (Cells v2, the aggregates), and the Placement and Cinder APIs
// nova.conf's [placement] and [cinder] name. Only a contradiction in the
// flags is an error.
func WireStatus(ctx context.Context, env *status.Env, src storage.Sources) (*StatusWiring, error) {
	w := &StatusWiring{Env: env}
	dbs, err := storage.ConnectReachable(ctx, src)
	if err != nil {
		return nil, err
	}
	w.closes = append(w.closes, func() { dbs.Close() })
	env.Cells, env.CellErrs, env.Placement, env.PlacementErr = stores.StatusCells(dbs.Cells), dbs.CellErrs, stores.StatusPlacement(dbs.Placement), dbs.PlacementErr

	if src.Embedded == "" && src.APIDB.URL == "" {
		env.APIErr = errors.New("no API database: set [api_database] connection in nova.conf, or --api-db")
	} else if d, err := storage.Connect(ctx, storage.Sources{Embedded: src.Embedded, APIDB: src.APIDB}, storage.NeedAPI, 0); err != nil {
		env.APIErr, env.AggregatesErr = err, err
	} else {
		w.closes = append(w.closes, func() { d.Close() })
		env.API = stores.StatusAPI(d.API)
		if dbs.Placement == nil {
			env.AggregatesErr = dbs.PlacementErr
		} else {
			env.Aggregates = &migrate.AggregateSync{API: stores.AggregateAPI(d.API), Cells: stores.AggregateCells(dbs.Cells), Placement: stores.AggregatePlacement(dbs.Placement)}
		}
	}
	if src.Embedded == "" && src.ConfigCell.URL != "" {
		// Cells v2 counts the compute nodes of [database] connection, as
		// nova-status does.
		if d, err := storage.Connect(ctx, storage.Sources{ConfigCell: src.ConfigCell}, storage.NeedCells, 0); err != nil {
			env.MainCellErr = err
		} else if len(d.Cells) == 1 {
			w.closes = append(w.closes, func() { d.Close() })
			env.MainCell = stores.StatusCells(d.Cells)[0]
		}
	}
	env.Upstream = UpstreamConfig(env.Options, src.APIDB.URL != "" || src.Embedded != "", env.Release)
	env.PlacementVersions = PlacementVersions(env.Options.Upstream.Placement)
	env.CinderVersions = CinderVersions(env.Options.Upstream)
	return w, nil
}

// UpstreamConfig is what nova.conf and placement.conf tell the upstream
// checks of release: the policy files each tool's oslo.config finds
// (nova-status looks beside the files and in /etc/nova, placement-status
// in /etc/placement; each has its own default name).
func UpstreamConfig(o config.Options, apiDB bool, rel release.Name) status.Upstream {
	row, err := status.LookupRelease(rel)
	if err != nil {
		// The commands refuse an unknown release before they get here;
		// the checks that read the row fail with the same error.
		row, _ = status.LookupRelease(status.DefaultRelease)
	}
	policy := func(def, project string) string {
		name := o.Upstream.PolicyFile.Value
		if name == "" {
			name = def
		}
		if name == "" {
			return ""
		}
		return config.FindFile(name, o.Files, project)
	}
	return status.Upstream{
		NovaPolicyFile:       policy(row.NovaPolicyDefault, "nova"),
		PlacementPolicyFile:  policy(row.PlacementPolicyDefault, "placement"),
		SendServiceUserToken: o.Upstream.SendServiceUserToken,
		APIDatabase:          apiDB,
		CinderConfigured:     o.Upstream.Cinder.AuthType != "",
	}
}

// PlacementVersions asks the Placement API nova.conf's [placement] names
// (keystoneauth: an auth_type and its options, endpoint_override) for
// its highest microversion, with the errors nova-status tells apart.
func PlacementVersions(a config.APIAuth) status.VersionsFunc {
	return func(ctx context.Context) (string, error) {
		var c *placementclient.Client
		var err error
		switch a.AuthType {
		case "":
			return "", status.ErrAPINoCredentials
		case "admin_token", "token_endpoint", "none", "noauth":
			endpoint := a.EndpointOverride
			if endpoint == "" {
				endpoint = a.Endpoint
			}
			if endpoint == "" {
				return "", status.ErrAPIEndpointNotFound
			}
			c, err = placementclient.New(ctx, placementclient.Config{Endpoint: endpoint, Auth: placementclient.StaticToken(a.Token),
				Retries: -1, Timeout: 30 * time.Second})
		default:
			iface := ""
			if len(a.ValidInterfaces) > 0 {
				iface = a.ValidInterfaces[0]
			}
			c, err = placementclient.Connect(ctx, placementclient.ConnectOptions{Endpoint: a.EndpointOverride, RegionName: a.RegionName, Interface: iface,
				Timeout: 30 * time.Second, Keystone: placementclient.KeystoneAuth{AuthURL: a.AuthURL, Username: a.Username, Password: a.Password,
					ProjectName: a.ProjectName, UserDomainName: a.UserDomainName, ProjectDomainName: a.ProjectDomainName}})
		}
		var pe *placementclient.Error
		switch {
		case errors.Is(err, placementclient.ErrKeystoneRefused):
			return "", status.ErrAPIUnauthorized
		case errors.Is(err, placementclient.ErrNoEndpoint):
			return "", status.ErrAPIEndpointNotFound
		case errors.As(err, &pe) && pe.Status == http.StatusUnauthorized:
			return "", status.ErrAPIUnauthorized
		case errors.As(err, &pe) && pe.Status == http.StatusNotFound:
			return "", status.ErrAPINotFound
		case err != nil:
			return "", err
		}
		_, max := c.ServerRange()
		return max.String(), nil
	}
}

// CinderVersions asks the Cinder API nova.conf's [cinder] names
// (keystoneauth options, catalog_info, endpoint_template) for its highest
// microversion, where nova.volume.cinder would.
func CinderVersions(u config.Upstream) status.VersionsFunc {
	a := u.Cinder
	return func(ctx context.Context) (string, error) {
		var endpoint, token string
		switch a.AuthType {
		case "admin_token", "token_endpoint", "none", "noauth":
			endpoint, token = a.Endpoint, a.Token
		default:
			// catalog_info is service_type:service_name:interface, the
			// interface in the old spelling ("publicURL").
			parts := strings.Split(u.CinderCatalogInfo, ":")
			iface := strings.TrimSuffix(parts[len(parts)-1], "URL")
			var err error
			endpoint, token, err = osapi.Service(ctx, osapi.Keystone{AuthURL: a.AuthURL, Username: a.Username, Password: a.Password, ProjectName: a.ProjectName,
				UserDomainName: a.UserDomainName, ProjectDomainName: a.ProjectDomainName, RegionName: u.CinderRegion, Interface: iface}, "volume")
			if err != nil {
				return "", err
			}
		}
		if u.CinderEndpointTemplate != "" {
			endpoint = u.CinderEndpointTemplate
		}
		url, err := status.CinderVersionURL(endpoint)
		if err != nil {
			return "", err
		}
		body, err := osapi.Get(ctx, url, token)
		if err != nil {
			return "", err
		}
		return status.CinderMaxVersion(body)
	}
}

package shared

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

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
	env.Sources = statusSources(env.Options, src)
	// A controller's nova.conf names Placement by its API ([placement]),
	// not its database: without a Placement database, the checks read
	// Placement through that API, as nova-status does. An API that cannot
	// be reached is the failure of the checks that need it.
	var placementAPI *placementclient.Client
	if src.Embedded == "" && src.PlacementDB.URL == "" && env.Options.Upstream.Placement.AuthType != "" {
		a := env.Options.Upstream.Placement
		env.Sources.Placement = "the Placement API (" + orSection(a.Source, "nova.conf [placement]") + ")"
		c, err := ConfigPlacementClient(ctx, a)
		if err != nil {
			env.Placement, env.PlacementErr = nil, fmt.Errorf("the Placement API nova.conf's [placement] names (%s): %w", orSection(a.Source, "[placement]"), err)
		} else {
			placementAPI = c
			env.Sources.Placement = "the Placement API " + c.Endpoint() + " (" + orSection(a.Source, "nova.conf [placement]") + ")"
			env.Placement, env.PlacementErr = &placementclient.StatusPlacement{C: c}, nil
		}
	}

	if src.Embedded == "" && src.APIDB.URL == "" {
		env.APIErr = errors.New("no API database: set [api_database] connection in nova.conf, or --api-db")
	} else if d, err := storage.Connect(ctx, storage.Sources{Embedded: src.Embedded, APIDB: src.APIDB}, storage.NeedAPI, 0); err != nil {
		env.APIErr, env.AggregatesErr = err, err
	} else {
		w.closes = append(w.closes, func() { d.Close() })
		env.API = stores.StatusAPI(d.API)
		switch {
		case placementAPI != nil:
			env.Aggregates = &migrate.AggregateSync{API: stores.AggregateAPI(d.API), Cells: stores.AggregateCells(dbs.Cells), Placement: placementclient.Store{C: placementAPI}}
		case dbs.Placement == nil:
			env.AggregatesErr = env.PlacementErr
		default:
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

// ConfigPlacementClient connects to the Placement API nova.conf's
// [placement] names (placementclient.FromConfig), for the upgrade checks:
// each request is sent once, so that a dead API fails the checks at once.
// A section that cannot name an API is status.ErrAPINoCredentials or
// ErrAPIEndpointNotFound, as nova-status tells them.
func ConfigPlacementClient(ctx context.Context, a config.APIAuth) (*placementclient.Client, error) {
	c, err := placementclient.FromConfig(ctx, a, placementclient.ConfigOptions{NoRetries: true})
	switch {
	case errors.Is(err, placementclient.ErrConfigNoAuth):
		return nil, status.ErrAPINoCredentials
	case errors.Is(err, placementclient.ErrConfigNoEndpoint):
		return nil, status.ErrAPIEndpointNotFound
	}
	return c, err
}

// PlacementVersions asks the Placement API nova.conf's [placement] names
// (ConfigPlacementClient) for its highest microversion, with the errors
// nova-status tells apart.
func PlacementVersions(a config.APIAuth) status.VersionsFunc {
	return func(ctx context.Context) (string, error) {
		c, err := ConfigPlacementClient(ctx, a)
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

func orSection(source, def string) string {
	if source != "" {
		return source
	}
	return def
}

// statusSources says where the checks read from: each database with the
// flag or config line that named it, the APIs with their section, the
// config files.
func statusSources(o config.Options, src storage.Sources) status.Sources {
	var s status.Sources
	origin := func(what string, so storage.Source) string {
		if so.URL == "" {
			return ""
		}
		if so.Origin != "" {
			return what + " (" + so.Origin + ")"
		}
		return what
	}
	if len(o.Files) > 0 {
		s.Config = "config files " + strings.Join(o.Files, ", ")
	}
	if src.Embedded != "" {
		s.Cells = "the cell database of the --db file"
		s.APIDB = "the API database of the --db file"
		s.Placement = "the Placement database of the --db file"
	} else {
		s.APIDB = origin("the API database", src.APIDB)
		s.Placement = origin("the Placement database", src.PlacementDB)
		var cells []string
		for _, c := range src.CellDBs {
			cells = append(cells, c.Origin)
		}
		switch {
		case len(cells) > 0:
			s.Cells = "the cell databases (" + strings.Join(cells, ", ") + ")"
		case src.APIDB.URL != "":
			s.Cells = "the cell databases of the API database's cell_mappings"
		case src.ConfigCell.URL != "":
			s.Cells = origin("the cell database", src.ConfigCell)
		}
	}
	if a := o.Upstream.Placement; a.AuthType != "" {
		s.PlacementAPI = "the Placement API (" + orSection(a.Source, "nova.conf [placement]") + ")"
	}
	if a := o.Upstream.Cinder; a.AuthType != "" {
		s.CinderAPI = "the Cinder API (" + orSection(a.Source, "nova.conf [cinder]") + ")"
	}
	return s
}

// DetectRelease is the release the cell databases' alembic heads and
// control services' versions say (status.DetectRelease), for --release
// auto.
func DetectRelease(ctx context.Context, src storage.Sources) (status.Detection, error) {
	dbs, err := storage.Connect(ctx, src, storage.NeedCells, 0)
	if err != nil {
		return status.Detection{}, err
	}
	defer dbs.Close()
	return status.DetectRelease(ctx, stores.StatusReleaseSources(dbs.Cells))
}

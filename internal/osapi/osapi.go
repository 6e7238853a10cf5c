// Package osapi reaches OpenStack services other than Placement for the
// little rpctl asks of them (an API's version document): a Keystone token
// and catalog endpoint, or a static token, and one GET.
package osapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/utils/v2/openstack/clientconfig"
)

// Timeout bounds each request.
const Timeout = 30 * time.Second

// Keystone are password credentials, as a keystoneauth section of
// nova.conf has them.
type Keystone struct {
	AuthURL, Username, Password, ProjectName, UserDomainName, ProjectDomainName string
	RegionName, Interface                                                       string
}

// Service authenticates with k and returns the token and the catalog's
// endpoint of service (clientconfig's names: "volume" with version
// "3" is the block-storage v3 endpoint).
func Service(ctx context.Context, k Keystone, service string) (endpoint, token string, err error) {
	opts := &clientconfig.ClientOpts{
		AuthInfo: &clientconfig.AuthInfo{AuthURL: k.AuthURL, Username: k.Username, Password: k.Password, ProjectName: k.ProjectName,
			UserDomainName: k.UserDomainName, ProjectDomainName: k.ProjectDomainName},
		RegionName:   k.RegionName,
		EndpointType: k.Interface,
	}
	sc, err := clientconfig.NewServiceClient(ctx, service, opts)
	if err != nil {
		return "", "", fmt.Errorf("Keystone: %s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return sc.Endpoint, sc.ProviderClient.Token(), nil
}

// Get fetches url with the token (none when ""); an answer other than 2xx
// is an error naming the status, as keystoneauth's HttpError.
func Get(ctx context.Context, url, token string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("unable to establish connection to %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s (HTTP %d)", http.StatusText(resp.StatusCode), resp.StatusCode)
	}
	return body, nil
}

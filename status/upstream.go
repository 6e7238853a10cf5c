package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/internal/release"
)

// The checks of nova-status upgrade check and placement-status upgrade
// check, with their names (nova.cmd.status.UpgradeCommands._upgrade_checks,
// placement.cmd.status.Checks._upgrade_checks).
const (
	CheckCellsV2          = "Cells v2"
	CheckPlacementAPI     = "Placement API"
	CheckCinderAPI        = "Cinder API"
	CheckPolicyJSON       = "Policy File JSON to YAML Migration"
	CheckOldComputes      = "Older than N-1 computes"
	CheckMachineTypeUnset = "hw_machine_type unset"
	CheckServiceUserToken = "Service User Token Configuration"
)

// Release is what changes from one OpenStack release to the next in the
// upstream checks: one row per release name, read from that release's
// Nova and Placement.
type Release struct {
	// OldestCompute is nova.objects.service.OLDEST_SUPPORTED_SERVICE_VERSION
	// and OldestComputeVersion its SERVICE_VERSION_ALIASES entry: the
	// oldest nova-compute service version the release runs with
	// (nova.utils.raise_if_old_compute).
	OldestCompute        string
	OldestComputeVersion int64
	// MinPlacementMicroversion is nova.cmd.status.MIN_PLACEMENT_MICROVERSION,
	// MinCinderMicroversion MIN_CINDER_MICROVERSION.
	MinPlacementMicroversion string
	MinCinderMicroversion    string
	// NovaPolicyDefault is the policy_file nova-status looks for when
	// [oslo_policy] policy_file is unset (nova.policy.DEFAULT_POLICY_FILE);
	// PlacementPolicyDefault placement-status's (oslo.policy's own
	// default: placement-status registers the option on its own
	// ConfigOpts, which placement.policy's set_defaults never sees).
	NovaPolicyDefault, PlacementPolicyDefault string
	// MachineTypeDetails is _check_machine_type_set's warning and
	// ServiceUserTokenDetails _check_service_user_token's failure: their
	// texts (the commands and links they name) changed.
	MachineTypeDetails, ServiceUserTokenDetails string
}

// Releases are the releases whose checks rpctl carries, one row for
// every release.Names() entry (TestReleasesCoverEveryRelease). The
// sources, file:line in each release's dist-packages, are in
// docs/releases.md.
var Releases = map[release.Name]Release{
	// Nova 26.2.2 (nova/objects/service.py:233 and :238,
	// nova/cmd/status.py:56, :60, :267 and :279), Placement 8.0.0,
	// oslo.policy 4.0.0 (oslo_policy/opts.py:53: policy.json).
	release.Zed: {
		OldestCompute: "Yoga", OldestComputeVersion: 61,
		MinPlacementMicroversion: "1.36", MinCinderMicroversion: "3.44",
		NovaPolicyDefault: "policy.yaml", PlacementPolicyDefault: "policy.json",
		MachineTypeDetails:      "\nInstances found without hw_machine_type set. This warning can be ignored if\nyour environment does not contain libvirt based compute hosts.\nUse the `nova-manage machine_type list_unset` command to list these instances.\nFor more details see the following:\nhttps://docs.openstack.org/latest/nova/admin/hw_machine_type.html",
		ServiceUserTokenDetails: "\nService user token configuration is required for all Nova services.\nFor more details see the following:\nhttps://docs.openstack.org/latest/nova/admin/configuration/service-user-token.html",
	},
	// The four releases between are read from their source, not run
	// (docs/releases.md). Each row is the series' newest point release:
	// Nova 27.5.1, 28.3.1, 29.4.0, 30.3.0 (git tags of openstack/nova),
	// Placement 9.0.0, 10.0.1, 11.0.1, 12.0.2, oslo.policy as the series'
	// upper-constraints.txt (openstack/requirements 2023.1-eom, 2023.2-eol,
	// 2024.1-eom, 2024.2-eol): 4.1.1, 4.2.1, 4.3.0, 4.4.0, whose default
	// policy_file is still policy.json (oslo_policy/opts.py:53, 4.4.0 :60;
	// 4.5.0 made it policy.yaml). MIN_PLACEMENT_MICROVERSION and
	// MIN_CINDER_MICROVERSION are "1.36" and '3.44' in every one
	// (nova/cmd/status.py:56, :60); placement/cmd/status.py is Placement
	// 8.0.0's in all. nova/cmd/status.py of 27.5.1, 28.3.1 and 29.4.0 is
	// one file (git blob da4039d5): the seven checks, the Service User
	// Token check backported to 2023.1 in 27.1.0 (27.0.0 lacked it) and
	// the links moved under /nova/latest/ (nova commit 74a3139b93 "Fix URLs
	// in status check results"). Nova 28.0.0 alone had an eighth check,
	// "Object ID linkage", reverted in 28.0.1 (nova commit e1b84a3987):
	// rpctl does not run it.
	//
	// Nova 27.5.1 (2023.1): nova/objects/service.py:256
	// OLDEST_SUPPORTED_SERVICE_VERSION = 'Yoga', :261 'Yoga': 61.
	release.R2023_1: {
		OldestCompute: "Yoga", OldestComputeVersion: 61,
		MinPlacementMicroversion: "1.36", MinCinderMicroversion: "3.44",
		NovaPolicyDefault: "policy.yaml", PlacementPolicyDefault: "policy.json",
		MachineTypeDetails:      machineTypeDetails2023,
		ServiceUserTokenDetails: serviceUserTokenDetails2023,
	},
	// Nova 28.3.1 (2023.2): nova/objects/service.py:256 'Antelope', :263
	// 'Antelope': 66.
	release.R2023_2: {
		OldestCompute: "Antelope", OldestComputeVersion: 66,
		MinPlacementMicroversion: "1.36", MinCinderMicroversion: "3.44",
		NovaPolicyDefault: "policy.yaml", PlacementPolicyDefault: "policy.json",
		MachineTypeDetails:      machineTypeDetails2023,
		ServiceUserTokenDetails: serviceUserTokenDetails2023,
	},
	// Nova 29.4.0 (2024.1): nova/objects/service.py:260 'Antelope', :267
	// 'Antelope': 66.
	release.R2024_1: {
		OldestCompute: "Antelope", OldestComputeVersion: 66,
		MinPlacementMicroversion: "1.36", MinCinderMicroversion: "3.44",
		NovaPolicyDefault: "policy.yaml", PlacementPolicyDefault: "policy.json",
		MachineTypeDetails:      machineTypeDetails2023,
		ServiceUserTokenDetails: serviceUserTokenDetails2023,
	},
	// Nova 30.3.0 (2024.2): nova/objects/service.py:260 'Caracal', :269
	// 'Caracal': 66; nova/cmd/status.py is Nova 31.0.0's (git blob
	// e4ab2129: `nova-manage libvirt list_unset_machine_type`).
	release.R2024_2: {
		OldestCompute: "Caracal", OldestComputeVersion: 66,
		MinPlacementMicroversion: "1.36", MinCinderMicroversion: "3.44",
		NovaPolicyDefault: "policy.yaml", PlacementPolicyDefault: "policy.json",
		MachineTypeDetails:      machineTypeDetails2024_2,
		ServiceUserTokenDetails: serviceUserTokenDetails2023,
	},
	// Nova 31.0.0 (Debian 13's 2:31.0.0-6+deb13u3):
	// nova/objects/service.py:262 OLDEST_SUPPORTED_SERVICE_VERSION =
	// 'Caracal', :271 'Caracal': 66; nova/cmd/status.py:56 and :60 (the
	// microversions, unchanged), :264-269 and :276-279 (the messages);
	// oslo.policy 4.5.1's default policy_file is policy.yaml
	// (oslo_policy/opts.py:60), for nova-status (nova/policy.py no longer
	// sets one) and placement-status alike.
	release.R2025_1: {
		OldestCompute: "Caracal", OldestComputeVersion: 66,
		MinPlacementMicroversion: "1.36", MinCinderMicroversion: "3.44",
		NovaPolicyDefault: "policy.yaml", PlacementPolicyDefault: "policy.yaml",
		MachineTypeDetails:      machineTypeDetails2024_2,
		ServiceUserTokenDetails: serviceUserTokenDetails2023,
	},
}

// The messages of nova-status that changed after Zed: nova/cmd/status.py
// of Nova 27.5.1 to 29.4.0 (:264-269, :276-279) and of Nova 30.0.0 on
// (:264-269: the nova-manage command renamed).
const (
	machineTypeDetails2023      = "\nInstances found without hw_machine_type set. This warning can be ignored if\nyour environment does not contain libvirt based compute hosts.\nUse the `nova-manage machine_type list_unset` command to list these instances.\nFor more details see the following:\nhttps://docs.openstack.org/nova/latest/admin/hw-machine-type.html"
	machineTypeDetails2024_2    = "\nInstances found without hw_machine_type set. This warning can be ignored if\nyour environment does not contain libvirt based compute hosts.\nUse the `nova-manage libvirt list_unset_machine_type` command to list these\ninstances. For more details see the following:\nhttps://docs.openstack.org/nova/latest/admin/hw-machine-type.html"
	serviceUserTokenDetails2023 = "\nService user token configuration is required for all Nova services.\nFor more details see the following:\nhttps://docs.openstack.org/nova/latest/admin/configuration/service-user-token.html"
)

// DefaultRelease is the release whose checks run when none is named.
const DefaultRelease = release.Default

// LookupRelease returns the row of the release name names (any case; ""
// is DefaultRelease).
func LookupRelease(name release.Name) (Release, error) {
	n, err := release.Parse(string(name))
	if err != nil {
		return Release{}, err
	}
	r, ok := Releases[n]
	if !ok {
		return Release{}, fmt.Errorf("no upgrade checks known for release %q", n)
	}
	return r, nil
}

// release is the Env's release's row.
func (e *Env) release() (Release, error) {
	return LookupRelease(e.Release)
}

// Upstream is what the config files tell the upstream checks.
type Upstream struct {
	// NovaPolicyFile and PlacementPolicyFile are the policy files each
	// tool's find_file finds ("" when none).
	NovaPolicyFile, PlacementPolicyFile string
	// SendServiceUserToken is nova.conf's [service_user]
	// send_service_user_token.
	SendServiceUserToken bool
	// APIDatabase says whether [api_database] connection is set (the
	// scope of "Older than N-1 computes": system, else cell).
	APIDatabase bool
	// CinderConfigured is [cinder] auth_type set: without it nova-status
	// takes Cinder as not used.
	CinderConfigured bool
}

// APIDB is Nova's API database as the upstream checks read it.
type APIDB interface {
	// CellMappings lists the cell mappings' uuids.
	CellMappingUUIDs(ctx context.Context) ([]string, error)
	// CountHostMappings counts host_mappings.
	CountHostMappings(ctx context.Context) (int, error)
}

// MachineTypes is the part of a cell hw_machine_type unset reads.
type MachineTypes interface {
	// CountInstancesWithoutMachineType counts the live instances, not
	// building, without image_hw_machine_type in their system metadata.
	CountInstancesWithoutMachineType(ctx context.Context) (int, error)
}

// Why an API could not be asked for its versions, as keystoneauth's
// exceptions tell nova-status.
var (
	ErrAPINoCredentials    = errors.New("no credentials")           // MissingAuthPlugin
	ErrAPIUnauthorized     = errors.New("credentials refused")      // Unauthorized
	ErrAPIEndpointNotFound = errors.New("endpoint not found")       // EndpointNotFound
	ErrAPIDiscoveryFailure = errors.New("version discovery failed") // DiscoveryFailure
	ErrAPINotFound         = errors.New("API answered 404")         // NotFound
)

// VersionsFunc asks an API for its highest microversion ("1.39").
type VersionsFunc func(ctx context.Context) (string, error)

// cell0UUID is nova.objects.CellMapping.CELL0_UUID.
const cell0UUID = "00000000-0000-0000-0000-000000000000"

// checkCellsV2 is nova.cmd.status.UpgradeCommands._check_cellsv2.
func (e *Env) checkCellsV2(ctx context.Context) (Code, string, error) {
	if e.API == nil {
		return unavailable(e.apiErr())
	}
	cells, err := e.API.CellMappingUUIDs(ctx)
	if err != nil {
		return unavailable(err)
	}
	if len(cells) < 2 {
		return Failure, "There needs to be at least two cell mappings, one for cell0 and one for your first cell. Run command 'nova-manage cell_v2 simple_cell_setup' and then retry.", nil
	}
	cell0 := false
	for _, u := range cells {
		cell0 = cell0 || u == cell0UUID
	}
	if !cell0 {
		return Failure, "No cell0 mapping found. Run command 'nova-manage cell_v2 simple_cell_setup' and then retry.", nil
	}
	n, err := e.API.CountHostMappings(ctx)
	if err != nil {
		return unavailable(err)
	}
	if n > 0 {
		return Success, "", nil
	}
	// nova-status counts the live compute_nodes of its [database]
	// connection (_count_compute_nodes); without one, rpctl counts those
	// of every cell it reads.
	var nodes map[string][]NodeCapacity
	switch {
	case e.MainCellErr != nil:
		return unavailable(e.MainCellErr)
	case e.MainCell != nil:
		ns, err := e.MainCell.ListNodeCapacities(ctx)
		if err != nil {
			return unavailable(err)
		}
		nodes = map[string][]NodeCapacity{cellName(e.MainCell): ns}
	default:
		var errs []error
		if nodes, errs = e.loadNodes(ctx); len(errs) > 0 {
			return unavailable(errs...)
		}
	}
	for _, ns := range nodes {
		for _, n := range ns {
			if !n.Deleted {
				return Failure, "No host mappings found but there are compute nodes. Run command 'nova-manage cell_v2 simple_cell_setup' and then retry.", nil
			}
		}
	}
	return Success, "No host mappings or compute nodes were found. Remember to run command 'nova-manage cell_v2 discover_hosts' when new compute hosts are deployed.", nil
}

// checkPlacementAPI is nova.cmd.status.UpgradeCommands._check_placement:
// the highest microversion of the Placement API nova.conf's [placement]
// reaches against MIN_PLACEMENT_MICROVERSION. An error keystoneauth does
// not name (the API down) crashed nova-status: here it is the check's
// Failure with no verdict (exit 255).
func (e *Env) checkPlacementAPI(ctx context.Context) (Code, string, error) {
	rel, err := e.release()
	if err != nil {
		return Failure, "", err
	}
	if e.PlacementVersions == nil {
		return Failure, "No credentials specified for placement API in nova.conf.", nil
	}
	max, err := e.PlacementVersions(ctx)
	switch {
	case errors.Is(err, ErrAPINoCredentials):
		return Failure, "No credentials specified for placement API in nova.conf.", nil
	case errors.Is(err, ErrAPIUnauthorized):
		return Failure, "Placement service credentials do not work.", nil
	case errors.Is(err, ErrAPIEndpointNotFound):
		return Failure, "Placement API endpoint not found.", nil
	case errors.Is(err, ErrAPIDiscoveryFailure):
		return Failure, "Discovery for placement API URI failed.", nil
	case errors.Is(err, ErrAPINotFound):
		return Failure, "Placement API does not seem to be running.", nil
	case err != nil:
		return Failure, "", &unreadableError{"Cannot reach the Placement API: " + err.Error()}
	}
	have, err1 := parseMicroversion(max)
	need, err2 := parseMicroversion(rel.MinPlacementMicroversion)
	if err1 != nil || err2 != nil {
		return Failure, "", errors.Join(err1, err2)
	}
	if less(have, need) {
		return Failure, fmt.Sprintf("Placement API version %d.%d needed, you have %d.%d.", need[0], need[1], have[0], have[1]), nil
	}
	return Success, "", nil
}

// checkCinderAPI is nova.cmd.status.UpgradeCommands._check_cinder: no
// [cinder] auth_type is Cinder not in use; an API below
// MIN_CINDER_MICROVERSION fails; anything else that goes wrong warns.
func (e *Env) checkCinderAPI(ctx context.Context) (Code, string, error) {
	rel, err := e.release()
	if err != nil {
		return Failure, "", err
	}
	if !e.Upstream.CinderConfigured {
		return Success, "", nil
	}
	if e.CinderVersions == nil {
		return Warning, "Unable to determine Cinder API version due to error: no Cinder client", nil
	}
	max, err := e.CinderVersions(ctx)
	if err != nil {
		return Warning, "Unable to determine Cinder API version due to error: " + err.Error(), nil
	}
	have, err1 := parseMicroversion(max)
	need, err2 := parseMicroversion(rel.MinCinderMicroversion)
	if err2 != nil {
		return Failure, "", err2
	}
	if err1 != nil {
		return Warning, "Unable to determine Cinder API version due to error: " + err1.Error(), nil
	}
	if less(have, need) {
		return Failure, fmt.Sprintf("Cinder API %s or greater is required. Deploy at least Cinder 12.0.0 (Queens).", rel.MinCinderMicroversion), nil
	}
	return Success, "", nil
}

// policyJSONDetails is oslo_upgradecheck.common_checks.check_policy_json's
// message.
const policyJSONDetails = "Your policy file is JSON-formatted which is deprecated. You need to switch to YAML-formatted file. Use the ``oslopolicy-convert-json-to-yaml`` tool to convert the existing JSON-formatted files to YAML in a backwards-compatible manner: https://docs.openstack.org/oslo.policy/latest/cli/oslopolicy-convert-json-to-yaml.html."

// checkPolicyJSON is oslo_upgradecheck.common_checks.check_policy_json:
// the policy file find_file finds is JSON (oslo_utils.fileutils.is_json:
// it parses as JSON) → Failure.
func checkPolicyJSON(path string) (Code, string, error) {
	if path == "" {
		return Success, "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Failure, "", fmt.Errorf("policy file: %w", err)
	}
	if isJSON(b) {
		return Failure, policyJSONDetails, nil
	}
	return Success, "", nil
}

// isJSON is Python's json.loads succeeding: one JSON value, whitespace
// around it (Python also takes NaN and Infinity, which no policy holds).
func isJSON(b []byte) bool {
	return json.Valid(b)
}

// checkOldComputes is nova.cmd.status.UpgradeCommands._check_old_computes
// (nova.utils.raise_if_old_compute): the oldest live nova-compute, over
// every cell (positive versions only, as
// objects.service.get_minimum_version_all_cells), older than the
// release's OLDEST_SUPPORTED_SERVICE_VERSION fails; no nova-compute at all
// passes.
func (e *Env) checkOldComputes(ctx context.Context) (Code, string, error) {
	rel, err := e.release()
	if err != nil {
		return Failure, "", err
	}
	var min int64
	errs := e.forEachCell(func(c Cell) error {
		sv, err := c.ServiceVersionSummary(ctx, []string{"nova-compute"}, rel.OldestComputeVersion, 0)
		if err != nil {
			return err
		}
		for _, s := range sv {
			if s.Count > 0 && s.Min > 0 && (min == 0 || s.Min < min) {
				min = s.Min
			}
		}
		return nil
	})
	if len(errs) > 0 {
		return unavailable(errs...)
	}
	if min == 0 || min >= rel.OldestComputeVersion {
		return Success, "", nil
	}
	scope := "cell"
	if e.Upstream.APIDatabase {
		scope = "system"
	}
	return Failure, fmt.Sprintf("Current Nova version does not support computes older than %s but the minimum compute service level in your %s is %d and the oldest supported service level is %d.",
		rel.OldestCompute, scope, min, rel.OldestComputeVersion), nil
}

// checkMachineTypeSet is nova.cmd.status.UpgradeCommands._check_machine_type_set
// (nova.virt.libvirt.machine_type_utils.get_instances_without_type): a
// live instance of any cell but cell0, not building, whose image
// properties lack hw_machine_type warns.
func (e *Env) checkMachineTypeSet(ctx context.Context) (Code, string, error) {
	n := 0
	errs := e.forEachCell(func(c Cell) error {
		mt, ok := c.(MachineTypes)
		if !ok {
			return fmt.Errorf("cell %s: cannot read instance system metadata", cellName(c))
		}
		k, err := mt.CountInstancesWithoutMachineType(ctx)
		n += k
		return err
	})
	if len(errs) > 0 {
		return unavailable(errs...)
	}
	if n > 0 {
		rel, err := e.release()
		if err != nil {
			return Failure, "", err
		}
		return Warning, rel.MachineTypeDetails, nil
	}
	return Success, "", nil
}

// checkServiceUserToken is nova.cmd.status.UpgradeCommands._check_service_user_token.
func (e *Env) checkServiceUserToken(context.Context) (Code, string, error) {
	if !e.Upstream.SendServiceUserToken {
		rel, err := e.release()
		if err != nil {
			return Failure, "", err
		}
		return Failure, rel.ServiceUserTokenDetails, nil
	}
	return Success, "", nil
}

func (e *Env) apiErr() error {
	if e.APIErr != nil {
		return e.APIErr
	}
	return errors.New("no API database ([api_database] connection or --api-db)")
}

// parseMicroversion reads "1.36" as microversion_parse does.
func parseMicroversion(s string) ([2]int, error) {
	maj, min, ok := strings.Cut(strings.TrimSpace(s), ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil {
		return [2]int{}, fmt.Errorf("invalid version string %q", s)
	}
	return [2]int{a, b}, nil
}

func less(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

// CinderVersionURL is where nova.volume.cinder asks Cinder for its versions:
// the endpoint must be the volume v3 API (cinderclient's
// get_volume_api_from_url; Nova refuses another), and the version document
// is at the endpoint cut before its "v3" (_get_server_version).
func CinderVersionURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	if !slices.Contains(strings.Split(u.Path, "/"), "v3") {
		return "", cinderURLError(endpoint)
	}
	for _, v := range []string{"v2", "v3"} {
		if strings.HasSuffix(u.Path, v) || strings.Contains(u.Path, "/"+v+"/") {
			return u.Scheme + "://" + u.Host + u.Path[:strings.LastIndex(u.Path, v)], nil
		}
	}
	return endpoint, nil
}

// CinderMaxVersion reads Cinder's version document as _get_server_version
// does: the first version whose "version" holds "3." gives the highest
// microversion, else 2.0; capped at python-cinderclient's MAX_VERSION
// (_get_highest_client_server_version).
func CinderMaxVersion(doc []byte) (string, error) {
	var d struct {
		Versions *[]struct {
			Version string `json:"version"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return "", err
	}
	if d.Versions == nil {
		return "", errors.New("'versions'")
	}
	current := "2.0"
	for _, v := range *d.Versions {
		if strings.Contains(v.Version, "3.") {
			current = v.Version
			break
		}
	}
	have, err := parseMicroversion(current)
	if err != nil {
		return "", err
	}
	if client, _ := parseMicroversion(cinderClientMaxVersion); less(client, have) {
		return cinderClientMaxVersion, nil
	}
	return current, nil
}

// cinderClientMaxVersion is python-cinderclient's api_versions.MAX_VERSION
// (9.1.0, Zed's).
const cinderClientMaxVersion = "3.70"

// cinderURLError is python-cinderclient's UnsupportedVersion for an
// endpoint without "v3", in its words.
type cinderURLError string

func (e cinderURLError) Error() string {
	return "Invalid url: '" + string(e) + "'. It must include one of: v3."
}

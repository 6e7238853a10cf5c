package status

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/internal/release"
)

// ReleaseSource is a cell database read for the release it runs: its
// schema's alembic head and its control services' versions, the two
// witnesses DetectRelease weighs.
type ReleaseSource interface {
	// Name is the cell's name ("" for an unmapped deployment's only cell).
	Name() string
	// CellSchemaHead is alembic_version's version_num ("" when the table
	// is missing or empty: a schema no Nova db sync stamped).
	CellSchemaHead(ctx context.Context) (string, error)
	// ServiceVersionRanges is, for each of binaries, the lowest and highest
	// version of its services that are not deleted, not forced down and
	// have reported a version (above 0).
	ServiceVersionRanges(ctx context.Context, binaries []string) ([]ServiceVersionRange, error)
}

// ServiceVersionRange is one binary's services' versions in a cell.
type ServiceVersionRange struct {
	Binary   string
	Count    int
	Min, Max int64
}

// cellHead is a row of cellHeads.
type cellHead struct {
	head     string
	releases []release.Name
}

// cellHeads maps a cell database's alembic head to the releases whose
// `nova-manage db sync` leaves it there (nova/db/main/migrations/versions,
// one chain; the git tags of openstack/nova). Nova 30 added no migration,
// so 2024.1's head is 2024.2's too: the service versions tell them apart.
func cellHeads() []cellHead {
	return []cellHead{
		// Nova 26.2.2: ccb0fa1a2252_add_encryption_fields_to_.py.
		{"ccb0fa1a2252", []release.Name{release.Zed}},
		// Nova 27.0.0 (to 27.5.1): 960aac0e09ea_de_duplicate_indexes_in_instances__.py.
		{"960aac0e09ea", []release.Name{release.R2023_1}},
		// Nova 28.0.0 (to 28.3.1): 1b91788ec3a6_drop_legacy_migrate_version_table.py
		// then 1acf2c98e646_add_compute_id_to_instance.py.
		{"1acf2c98e646", []release.Name{release.R2023_2}},
		// Nova 29.0.0 (to 29.4.0): 13863f4e1612_create_share_mapping_table.py;
		// Nova 30.0.0 (to 30.3.0) adds none.
		{"13863f4e1612", []release.Name{release.R2024_1, release.R2024_2}},
		// Nova 31.0.0: d60bddf7a903_add_constraint_instance_share_avoid_.py
		// then 2903cd72dc14_add_tls_port_to_console_auth_tokens.py.
		{"2903cd72dc14", []release.Name{release.R2025_1}},
	}
}

// ReleasesOfCellHead is the releases whose db sync leaves a cell database
// at alembic revision head: one, or two for 2024.1/2024.2's. A revision
// inside a release's chain (a db sync stopped halfway), older than Zed's
// head or unknown is an error saying what to do; so is "" (no db sync
// stamped the schema) when the caller needs the head to decide.
func ReleasesOfCellHead(head string) ([]release.Name, error) {
	for _, h := range cellHeads() {
		if h.head == head {
			return h.releases, nil
		}
	}
	switch head {
	case "1b91788ec3a6":
		return nil, fmt.Errorf("alembic revision %s is halfway through 2023.2's (Nova 28) db sync: finish nova-manage db sync", head)
	case "d60bddf7a903":
		return nil, fmt.Errorf("alembic revision %s is halfway through 2025.1's (Nova 31) db sync: finish nova-manage db sync", head)
	case "8f2f1571d55b", "16f1fbcab42b":
		return nil, fmt.Errorf("alembic revision %s is older than Zed's head (ccb0fa1a2252): finish that release's nova-manage db sync, or name the release with --nova-release", head)
	case "":
		return nil, fmt.Errorf("no alembic_version: a cell schema no nova-manage db sync stamped (rpctl init makes Zed's without one)")
	}
	return nil, fmt.Errorf("alembic revision %s is no Nova cell schema head rpctl knows (%s): a release newer than rpctl knows, or an unreleased one; name the nearest release rpctl knows with --nova-release (%s)", head, knownHeads(), strings.Join(release.Strings(), ", "))
}

func knownHeads() string {
	var parts []string
	for _, h := range cellHeads() {
		parts = append(parts, releaseList(h.releases)+"'s "+h.head)
	}
	return strings.Join(parts, ", ")
}

// ReleaseOfCellHead is ReleasesOfCellHead where the head alone must name
// one release.
func ReleaseOfCellHead(head string) (release.Name, error) {
	rels, err := ReleasesOfCellHead(head)
	if err != nil {
		return "", err
	}
	if len(rels) != 1 {
		return "", fmt.Errorf("alembic revision %s is the head of %s alike; the service versions or --nova-release tell them apart", head, releaseList(rels))
	}
	return rels[0], nil
}

// ControlBinaries are the services whose versions witness the release the
// control plane runs: the services an upgrade restarts on the new code
// before the computes (nova-compute lags by design, N-1 supported).
var ControlBinaries = []string{"nova-conductor", "nova-scheduler", "nova-osapi_compute", "nova-metadata"}

// serviceVersion is a row of serviceVersions.
type serviceVersion struct {
	version  int64
	releases []release.Name
}

// serviceVersions maps nova.objects.service.SERVICE_VERSION, the version a
// service writes into its services row, to the releases whose code has it
// (nova/objects/service.py:34 of each tag): Nova 26.2.2 64; Nova 27.0.0,
// 28.0.0 and 29.0.0 66 (the aliases 'Antelope', 'Bobcat', 'Caracal': 66:
// no RPC change in 2023.2 or 2024.1); Nova 30.0.0 67 ('Dalmatian'); Nova
// 31.0.0 68 ('Epoxy'). 65 was a version of the 2023.1 cycle no release
// shipped.
func serviceVersions() []serviceVersion {
	return []serviceVersion{
		{64, []release.Name{release.Zed}},
		{66, []release.Name{release.R2023_1, release.R2023_2, release.R2024_1}},
		{67, []release.Name{release.R2024_2}},
		{68, []release.Name{release.R2025_1}},
	}
}

// ReleasesOfServiceVersion is the releases whose services report version
// v; nil for a version no release rpctl knows shipped. newer says v is
// above every known release's: services of a release rpctl does not know.
func ReleasesOfServiceVersion(v int64) (rels []release.Name, newer bool) {
	sv := serviceVersions()
	for _, s := range sv {
		if s.version == v {
			return s.releases, false
		}
	}
	return nil, v > sv[len(sv)-1].version
}

// Witness says which evidence named the release.
type Witness string

// The witnesses.
const (
	// WitnessBoth: the alembic head and the service versions agree (or the
	// versions chose between the two releases one head is shared by).
	WitnessBoth Witness = "alembic head and service versions"
	// WitnessHead: the alembic head alone (no control service has a
	// version, or their versions are of another release: an upgrade under
	// way, schema first).
	WitnessHead Witness = "alembic head"
	// WitnessServices: the service versions alone (no cell schema stamped
	// by a db sync).
	WitnessServices Witness = "service versions"
	// WitnessOperator: --nova-release or [rpctl] nova_release.
	WitnessOperator Witness = "named by the operator"
)

// Detection is what DetectRelease concluded and why.
type Detection struct {
	Release release.Name
	Witness Witness
	// Seen is what each witness said, for the operator: the cells' heads,
	// the control services' highest versions, a disagreement.
	Seen string
}

// DetectRelease is the release the cells' schemas and control services
// say. Each witness gives the releases it fits: a cell's alembic head one
// (two for 2024.1/2024.2's shared head), the highest version among the
// control services (ControlBinaries) of every cell one (three for 66).
//
// When both give one release and they differ, the alembic head wins: an
// upgrade runs the new release's `nova-manage db sync` before it restarts
// any service on the new code (and the new release's nova-status and
// online_data_migrations, which rpctl stands in for, run in between), so a
// cloud whose schema is newer than its services is mid-upgrade to the
// schema's release. The service versions only choose between the releases
// a head is shared by, and stand alone when no cell was stamped by a db
// sync (rpctl init's schemas). Services newer than every release rpctl
// knows are refused: the cloud runs code rpctl has no rules for. Cells
// whose heads are of different releases, and a shared head the services
// cannot settle, are refused asking for --nova-release.
func DetectRelease(ctx context.Context, cells []ReleaseSource) (Detection, error) {
	if len(cells) == 0 {
		return Detection{}, fmt.Errorf("no cell database to read the release from; name it with --nova-release")
	}
	var headSet []release.Name
	var seen []string
	stamped := false
	var maxVersion int64
	var maxAt string
	for _, c := range cells {
		name := c.Name()
		if name == "" {
			name = "default"
		}
		head, err := c.CellSchemaHead(ctx)
		if err != nil {
			return Detection{}, err
		}
		if head == "" {
			seen = append(seen, fmt.Sprintf("cell %s without alembic_version", name))
		} else {
			rels, err := ReleasesOfCellHead(head)
			if err != nil {
				return Detection{}, fmt.Errorf("cell %s: %w", name, err)
			}
			seen = append(seen, fmt.Sprintf("cell %s at %s (%s)", name, head, releaseList(rels)))
			if !stamped {
				headSet, stamped = rels, true
			} else if headSet = intersect(headSet, rels); len(headSet) == 0 {
				return Detection{}, fmt.Errorf("the cells' schemas are of different releases: %s; finish the upgrade's db sync in every cell, or name the release with --nova-release", strings.Join(seen, ", "))
			}
		}
		ranges, err := c.ServiceVersionRanges(ctx, ControlBinaries)
		if err != nil {
			return Detection{}, err
		}
		for _, r := range ranges {
			if r.Max > maxVersion {
				maxVersion, maxAt = r.Max, r.Binary+" in cell "+name
			}
		}
	}
	var svcSet []release.Name
	if maxVersion > 0 {
		rels, newer := ReleasesOfServiceVersion(maxVersion)
		if newer {
			newest := serviceVersions()[len(serviceVersions())-1]
			return Detection{}, fmt.Errorf("%s reports service version %d, newer than the newest release rpctl knows (%s: %d): a release rpctl has no rules for; name the nearest it knows with --nova-release (%s)", maxAt, maxVersion, releaseList(newest.releases), newest.version, strings.Join(release.Strings(), ", "))
		}
		svcSet = rels
		what := "no release rpctl knows"
		if len(rels) > 0 {
			what = releaseList(rels)
		}
		seen = append(seen, fmt.Sprintf("control services up to version %d (%s, %s)", maxVersion, maxAt, what))
	} else {
		seen = append(seen, "no control service with a version")
	}
	said := strings.Join(seen, ", ")
	switch {
	case stamped && len(intersect(headSet, svcSet)) == 1:
		return Detection{Release: intersect(headSet, svcSet)[0], Witness: WitnessBoth, Seen: said}, nil
	case stamped && len(headSet) == 1:
		if maxVersion > 0 {
			said += "; the schema's release wins (db sync runs before the services are upgraded)"
		}
		return Detection{Release: headSet[0], Witness: WitnessHead, Seen: said}, nil
	case stamped:
		return Detection{}, fmt.Errorf("%s: the schema is %s's and the control services do not tell which; name the release with --nova-release", said, releaseList(headSet))
	case len(svcSet) == 1:
		return Detection{Release: svcSet[0], Witness: WitnessServices, Seen: said}, nil
	case len(svcSet) > 1:
		return Detection{}, fmt.Errorf("%s: no cell schema stamped by a db sync, and service version %d is %s's alike; name the release with --nova-release", said, maxVersion, releaseList(svcSet))
	}
	return Detection{}, fmt.Errorf("%s: neither witness names a release rpctl knows; name it with --nova-release (%s)", said, strings.Join(release.Strings(), ", "))
}

// intersect keeps the releases of a that b holds too, in a's order.
func intersect(a, b []release.Name) []release.Name {
	var out []release.Name
	for _, n := range a {
		if slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// releaseList spells releases for messages: "2024.1 or 2024.2".
func releaseList(rels []release.Name) string {
	s := make([]string, len(rels))
	for i, r := range rels {
		s[i] = string(r)
	}
	return strings.Join(s, " or ")
}

// ServiceVersionOf is SERVICE_VERSION of release rel's Nova, for tests
// and messages; 0 for a release without a row.
func ServiceVersionOf(rel release.Name) int64 {
	for _, s := range serviceVersions() {
		if slices.Contains(s.releases, rel) {
			return s.version
		}
	}
	return 0
}

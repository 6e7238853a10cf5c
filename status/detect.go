package status

import (
	"context"
	"fmt"
	"strings"

	"github.com/rpctl/rpctl/internal/release"
)

// SchemaHead reads the alembic revision a cell database's schema is at.
type SchemaHead interface {
	// Name is the cell's name ("" for an unmapped deployment's only cell).
	Name() string
	// CellSchemaHead is alembic_version's version_num ("" when the table
	// is missing or empty: a schema no Nova db sync stamped).
	CellSchemaHead(ctx context.Context) (string, error)
}

// ReleaseOfCellHead is the release whose `nova-manage db sync` leaves a
// cell database at alembic revision head (nova/db/main/migrations/versions,
// a single chain): Nova 26.2.2's head is ccb0fa1a2252
// (ccb0fa1a2252_add_encryption_fields_to_.py), Nova 31.0.0's 2903cd72dc14
// (2903cd72dc14_add_tls_port_to_console_auth_tokens.py). The five
// revisions between them belong to releases rpctl has no rules for
// (2023.1-2024.2; which one each is not measured here): refused, as is an
// older or unknown head, with a message saying to name the release.
func ReleaseOfCellHead(head string) (release.Name, error) {
	switch head {
	case "ccb0fa1a2252":
		return release.Zed, nil
	case "2903cd72dc14":
		return release.R2025_1, nil
	case "960aac0e09ea", "1b91788ec3a6", "1acf2c98e646", "13863f4e1612", "d60bddf7a903":
		return "", fmt.Errorf("alembic revision %s is between Zed's and 2025.1's heads: a release rpctl has no rules for; name the nearest with --release %s", head, strings.Join(release.Strings(), "|"))
	case "8f2f1571d55b", "16f1fbcab42b":
		return "", fmt.Errorf("alembic revision %s is older than Zed's head (ccb0fa1a2252): finish that release's nova-manage db sync, or name the release with --release", head)
	case "":
		return "", fmt.Errorf("no alembic_version: a cell schema no nova-manage db sync stamped (rpctl init makes Zed's without one); name the release with --release")
	}
	return "", fmt.Errorf("alembic revision %s is no Nova cell schema head rpctl knows (Zed's ccb0fa1a2252, 2025.1's 2903cd72dc14); name the release with --release", head)
}

// DetectRelease is the release every cell's schema head says; cells that
// disagree (an upgrade half done) are an error naming each.
func DetectRelease(ctx context.Context, cells []SchemaHead) (release.Name, string, error) {
	if len(cells) == 0 {
		return "", "", fmt.Errorf("no cell database to read the release from; name it with --release")
	}
	var rel release.Name
	var seen []string
	for _, c := range cells {
		name := c.Name()
		if name == "" {
			name = "default"
		}
		head, err := c.CellSchemaHead(ctx)
		if err != nil {
			return "", "", err
		}
		r, err := ReleaseOfCellHead(head)
		if err != nil {
			return "", "", fmt.Errorf("cell %s: %w", name, err)
		}
		seen = append(seen, fmt.Sprintf("cell %s at %s (%s)", name, head, r))
		if rel != "" && r != rel {
			return "", "", fmt.Errorf("the cells' schemas are of different releases: %s; name the release with --release", strings.Join(seen, ", "))
		}
		rel = r
	}
	return rel, strings.Join(seen, ", "), nil
}

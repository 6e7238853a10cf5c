package schema

import (
	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/release"
)

// SchemaReleases are the Nova and Placement versions whose db sync produced
// release.Default's embedded schemas.
func SchemaReleases() (nova, placement string) {
	return SchemaReleasesOf(release.Default)
}

// SchemaReleasesOf are the Nova and Placement versions whose db sync
// produced the dumps release rel's cell schema is read from (read from the
// dumps' header, so they cannot drift from the schemas rpctl speaks; a
// release known by rules only names the release it shares them with, see
// ddlShared; one that derives its cell from it names its own, ddlEdits);
// "" when rpctl holds no schema of rel.
func SchemaReleasesOf(rel release.Name) (nova, placement string) {
	if e, ok := ddlEdits()[rel][PartCell]; ok {
		return e.nova, e.placement
	}
	dir, err := ddlDir(rel, PartCell)
	if err != nil {
		return "", ""
	}
	b, err := schemaFS.ReadFile(dir + "/mysql_cell.sql")
	if err != nil {
		return "", ""
	}
	if m := headerRE.Get().FindSubmatch(b); m != nil {
		return string(m[1]), string(m[2])
	}
	return "", ""
}

var headerRE = &lazyre.Regexp{Expr: `nova ([0-9][0-9.]*); openstack-placement ([0-9][0-9.]*)`}

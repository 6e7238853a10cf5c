package schema

import (
	"regexp"
	"sync"
)

// SchemaReleases are the Nova and Placement releases whose db sync produced
// the embedded schemas (read from the dumps' header, so they cannot drift
// from the schemas rpctl speaks).
func SchemaReleases() (nova, placement string) {
	releasesOnce.Do(func() {
		b, err := schemaFS.ReadFile("sql/mysql_cell.sql")
		if err != nil {
			return
		}
		if m := regexp.MustCompile(`nova ([0-9][0-9.]*); openstack-placement ([0-9][0-9.]*)`).FindSubmatch(b); m != nil {
			releases[0], releases[1] = string(m[1]), string(m[2])
		}
	})
	return releases[0], releases[1]
}

var (
	releasesOnce sync.Once
	releases     [2]string
)

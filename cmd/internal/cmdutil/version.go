package cmdutil

import (
	"fmt"
	"github.com/rpctl/rpctl/internal/release"
	"runtime/debug"

	"github.com/rpctl/rpctl/storage/schema"
)

// BuildInfo is what `make build` stamps into the binary with -ldflags -X
// (main passes it here).
type BuildInfo struct {
	Version, Commit, Date string
}

// Build is this binary's stamp; main sets it before Run.
var Build BuildInfo

// VersionString is rpctl --version: the release, commit and build date
// (from -ldflags, else from the module and VCS data `go install` and
// `go build` record), and the schema releases rpctl speaks.
func VersionString(b BuildInfo) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" || b.Version == "dev" {
			if v := bi.Main.Version; v != "" && v != "(devel)" {
				b.Version = v
			}
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				if s.Value == "true" && b.Commit != "" && len(b.Commit) < 50 {
					b.Commit += "-dirty"
				}
			}
		}
	}
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	nova, placement := schema.SchemaReleases()
	return fmt.Sprintf("%s (commit %s, built %s)\nschemas: Nova %s, Placement %s\nreleases: %s\n",
		or(b.Version, "dev"), or(b.Commit, "unknown"), or(b.Date, "unknown"), nova, placement, release.Summary())
}

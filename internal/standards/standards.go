// Package standards holds the standard resource classes (os-resource-classes
// 1.1.0) and traits (os-traits 2.9.0) that Placement 8.0.0 syncs into its
// database. It is the single copy of those lists: storage syncs them into
// new databases and the candidates core uses them for synthetic clouds. The
// lists are generated from the Debian packages by
// scripts/dump-reference-schema.sh and embedded at build time, so reading
// them does no I/O.
package standards

import (
	_ "embed"
	"strings"
)

var (
	//go:embed resource_classes.txt
	classesText string
	//go:embed traits.txt
	traitsText string

	resourceClasses = parseList(classesText)
	traits          = parseList(traitsText)
)

// FirstCustomResourceClassID is where Placement starts numbering custom
// resource classes (MIN_CUSTOM_RESOURCE_CLASS_ID), clear of the standard
// classes whose id is their index.
const FirstCustomResourceClassID = 10000

func parseList(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// ResourceClasses returns os-resource-classes' STANDARDS in order: a class's
// Placement id is its index. The slice is shared; do not modify it.
func ResourceClasses() []string { return resourceClasses }

// Traits returns os-traits' names, sorted. The slice is shared; do not
// modify it.
func Traits() []string { return traits }

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
	"sync"
)

var (
	//go:embed resource_classes.txt
	classesText string
	//go:embed traits.txt
	traitsText string
)

// The lists are split on first use, not at init: every command (even
// --version) would pay for them otherwise (issue 22).
var lists struct {
	once            sync.Once
	resourceClasses []string
	traits          []string
	classSet        map[string]bool
	traitSet        map[string]bool
}

func load() {
	lists.once.Do(func() {
		lists.resourceClasses = parseList(classesText)
		lists.traits = parseList(traitsText)
		lists.classSet = make(map[string]bool, len(lists.resourceClasses))
		for _, c := range lists.resourceClasses {
			lists.classSet[c] = true
		}
		lists.traitSet = make(map[string]bool, len(lists.traits))
		for _, t := range lists.traits {
			lists.traitSet[t] = true
		}
	})
}

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
func ResourceClasses() []string { load(); return lists.resourceClasses }

// IsResourceClass reports whether name is a standard resource class.
func IsResourceClass(name string) bool { load(); return lists.classSet[name] }

// Traits returns os-traits' names, sorted. The slice is shared; do not
// modify it.
func Traits() []string { load(); return lists.traits }

// IsTrait reports whether name is a standard trait.
func IsTrait(name string) bool { load(); return lists.traitSet[name] }

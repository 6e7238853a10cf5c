// Package standards holds the standard resource classes (os-resource-classes
// 1.1.0 in every release rpctl knows) and traits that Placement syncs into
// its database: os-traits 2.9.0 for Zed (Placement 8.0.0), 2.10.0 for
// 2023.1, 3.0.0 for 2023.2 and 2024.1, 3.1.0 for 2024.2, 3.4.0 for 2025.1
// (Placement 13.0.0), one list per release. It is the single
// copy of those lists: storage syncs them into new databases, the
// candidates core uses them for synthetic clouds, and the rules that tell a
// standard trait from one to normalise read them by release. The lists are
// generated from the Debian packages (2025.1's in the release chroot) by
// scripts/dump-reference-schema.sh and embedded at build time, so reading
// them does no I/O.
package standards

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/rpctl/rpctl/internal/release"
)

var (
	//go:embed resource_classes.txt
	classesText string
	//go:embed traits.txt
	traitsZed string
	//go:embed traits-2023.1.txt
	traits2023_1 string
	//go:embed traits-2023.2.txt
	traits2023_2 string
	//go:embed traits-2024.1.txt
	traits2024_1 string
	//go:embed traits-2024.2.txt
	traits2024_2 string
	//go:embed traits-2025.1.txt
	traits2025_1 string
)

// traitsText is the os-traits list of a release (os_traits.get_traits(),
// what placement/objects/trait.py _trait_sync writes on the API's first
// request): Zed python3-os-traits 2.9.0-2, 2025.1 python3-os-traits 3.4.0-1,
// which adds 14 traits and removes none (docs/releases.md lists them).
// The releases between have the os-traits of their upper-constraints.txt
// (openstack/requirements 2023.1-eom: 2.10.0, 2023.2-eol and 2024.1-eom:
// 3.0.0, 2024.2-eol: 3.1.0), os_traits.get_traits() of those git tags
// (scripts/os-traits-lists.sh). A release without a list is a programming
// error TestTraitsEveryRelease catches.
func traitsText(rel release.Name) string {
	switch rel {
	case release.Zed:
		return traitsZed
	case release.R2023_1:
		return traits2023_1
	case release.R2023_2:
		return traits2023_2
	case release.R2024_1:
		return traits2024_1
	case release.R2024_2:
		return traits2024_2
	case release.R2025_1:
		return traits2025_1
	}
	panic(fmt.Sprintf("standards: no os-traits list for release %q", rel))
}

// byRelease holds each release's traits, split on first use.
var byRelease struct {
	mu    sync.Mutex
	lists map[release.Name]*traitList
}

type traitList struct {
	names []string
	set   map[string]bool
}

func traitsOf(rel release.Name) *traitList {
	if rel == "" {
		rel = release.Default
	}
	byRelease.mu.Lock()
	defer byRelease.mu.Unlock()
	if l, ok := byRelease.lists[rel]; ok {
		return l
	}
	if byRelease.lists == nil {
		byRelease.lists = map[release.Name]*traitList{}
	}
	l := &traitList{names: parseList(traitsText(rel))}
	l.set = make(map[string]bool, len(l.names))
	for _, t := range l.names {
		l.set[t] = true
	}
	byRelease.lists[rel] = l
	return l
}

// The lists are split on first use, not at init: every command (even
// --version) would pay for them otherwise (issue 22).
var lists struct {
	once            sync.Once
	resourceClasses []string
	classSet        map[string]bool
}

func load() {
	lists.once.Do(func() {
		lists.resourceClasses = parseList(classesText)
		lists.classSet = make(map[string]bool, len(lists.resourceClasses))
		for _, c := range lists.resourceClasses {
			lists.classSet[c] = true
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

// Traits returns the default release's (release.Default) os-traits names,
// sorted. The slice is shared; do not modify it.
func Traits() []string { return TraitsOf(release.Default) }

// IsTrait reports whether name is a standard trait of the default release.
func IsTrait(name string) bool { return IsTraitOf(release.Default, name) }

// TraitsOf returns release rel's os-traits names, sorted ("" is
// release.Default). The slice is shared; do not modify it.
func TraitsOf(rel release.Name) []string { return traitsOf(rel).names }

// IsTraitOf reports whether name is a standard trait in release rel.
func IsTraitOf(rel release.Name, name string) bool { return traitsOf(rel).set[name] }

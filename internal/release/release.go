// Package release names the OpenStack releases rpctl knows the rules of.
// A rule that changed between releases is a table keyed by Name in its
// domain (migrate's initial allocation ratios, status' upgrade checks);
// this package holds only the list, so that every command's --release
// accepts the same names and defaults to the same one.
package release

import (
	"fmt"
	"strings"
)

// Name is an OpenStack release as rpctl's --release flags spell it:
// lower case, the series name up to Zed ("zed"), the year.number since
// ("2025.1").
type Name string

// The releases rpctl knows.
const (
	// Zed is Nova 26, Placement 8.0.0: Debian 12 "bookworm".
	Zed Name = "zed"
	// R2023_1 is 2023.1 "Antelope": Nova 27, Placement 9.
	R2023_1 Name = "2023.1"
	// R2023_2 is 2023.2 "Bobcat": Nova 28, Placement 10.
	R2023_2 Name = "2023.2"
	// R2024_1 is 2024.1 "Caracal": Nova 29, Placement 11.
	R2024_1 Name = "2024.1"
	// R2024_2 is 2024.2 "Dalmatian": Nova 30, Placement 12.
	R2024_2 Name = "2024.2"
	// R2025_1 is 2025.1 "Epoxy": Nova 31, Placement 13: Debian 13 "trixie".
	R2025_1 Name = "2025.1"
)

// Default is the release a command follows when none is named.
const Default = Zed

// known lists the releases in release order.
var known = []Name{Zed, R2023_1, R2023_2, R2024_1, R2024_2, R2025_1}

// Proven are the releases whose rules rpctl's tests compare with that
// release's own Nova and Placement, run (Debian 12's Zed on the build
// machines, Debian 13's 2025.1 in scripts/release-chroot.sh's chroot). The
// others' rules are read from their source and release notes
// (docs/releases.md) and checked by table tests only.
var proven = []Name{Zed, R2025_1}

// IsProven says whether rel's rules are proven by running its own code.
func IsProven(rel Name) bool {
	for _, p := range proven {
		if p == rel {
			return true
		}
	}
	return false
}

// Summary lists the releases rpctl speaks for --version: those proven by
// running their own code, then those whose rules are read from source.
func Summary() string {
	var run, read []string
	for _, n := range known {
		if IsProven(n) {
			run = append(run, string(n))
		} else {
			read = append(read, string(n))
		}
	}
	return strings.Join(run, ", ") + " (proven against their own Nova and Placement); " +
		strings.Join(read, ", ") + " (rules read from their source)"
}

// Series is the release's series name ("Zed", "Antelope", ...): the
// keys of Nova's SERVICE_VERSION_ALIASES.
func (n Name) Series() string {
	switch n {
	case Zed:
		return "Zed"
	case R2023_1:
		return "Antelope"
	case R2023_2:
		return "Bobcat"
	case R2024_1:
		return "Caracal"
	case R2024_2:
		return "Dalmatian"
	case R2025_1:
		return "Epoxy"
	}
	return ""
}

// Names lists the releases rpctl knows, oldest first.
func Names() []Name { return append([]Name(nil), known...) }

// Strings is Names as strings, for flag help and messages.
func Strings() []string {
	out := make([]string, len(known))
	for i, n := range known {
		out[i] = string(n)
	}
	return out
}

// Parse returns the release s names (any case, surrounding blanks
// ignored; "" is Default), or an error listing the known ones.
func Parse(s string) (Name, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return Default, nil
	}
	for _, n := range known {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("rpctl knows the rules of %s, not %q", strings.Join(Strings(), ", "), s)
}

// FlagUsage is the help of a command's --release flag; what names the
// rules the release selects ("whose nova-status and placement-status
// checks run").
func FlagUsage(what string) string {
	return "the OpenStack release " + what + " (" + strings.Join(Strings(), ", ") + ")"
}

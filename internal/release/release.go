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
	// R2025_1 is 2025.1 "Epoxy": Nova 31, Placement 13: Debian 13 "trixie".
	R2025_1 Name = "2025.1"
)

// Default is the release a command follows when none is named.
const Default = Zed

// known lists the releases in release order.
var known = []Name{Zed, R2025_1}

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

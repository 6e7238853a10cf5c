package shared

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/internal/release"
)

// AddReleaseFlag adds --release, the OpenStack release whose rules a
// command follows: the same name, default and values on every command
// that takes it (`rpctl status`, `rpctl migrate`), from internal/release.
// what says what the release selects ("whose nova-status … checks run").
// A flag set that has --release already keeps it: the parts of one
// command share one --release (migrate all's migrations bind the same
// destination; rpctl exporter registers its own first and copies the
// value into its checks' options when it runs).
func AddReleaseFlag(fs *pflag.FlagSet, dst *string, what string) {
	if fs.Lookup("release") != nil {
		return
	}
	fs.StringVar(dst, "release", string(release.Default), release.FlagUsage(what))
}

// ParseRelease checks a --release value before anything connects, so a
// typo costs no connections; the error names the flag and the releases
// rpctl knows.
func ParseRelease(s string) (release.Name, error) {
	n, err := release.Parse(s)
	if err != nil {
		return "", fmt.Errorf("--release: %w", err)
	}
	return n, nil
}

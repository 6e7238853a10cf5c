package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultFiles are read, when they exist, if the command line names no
// config file and no database, as nova-manage reads /etc/nova/nova.conf.
// RPCTL_DEFAULT_CONFIG_FILES (colon-separated; empty for none) replaces
// them, for tests and unusual layouts.
func DefaultFiles() []string {
	if v, ok := os.LookupEnv("RPCTL_DEFAULT_CONFIG_FILES"); ok {
		if v == "" {
			return nil
		}
		return strings.Split(v, ":")
	}
	return []string{"/etc/nova/nova.conf", "/etc/placement/placement.conf"}
}

// ExistingDefaultFiles are the DefaultFiles that exist.
func ExistingDefaultFiles() []string {
	var out []string
	for _, p := range DefaultFiles() {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// WithDirs returns the files oslo.config reads, in its order: files, then
// for each --config-dir every *.conf in it sorted by name. A directory that
// does not exist is an error, as in oslo.config.
func WithDirs(files, dirs []string) ([]string, error) {
	out := append([]string(nil), files...)
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--config-dir %s: not a directory", d)
		}
		matches, err := filepath.Glob(filepath.Join(d, "*.conf"))
		if err != nil {
			return nil, fmt.Errorf("--config-dir %s: %w", d, err)
		}
		sort.Strings(matches)
		out = append(out, matches...)
	}
	return out, nil
}

// HostFiles lists a directory of compute hosts' own config files: every
// regular file named <host>.conf, by host (the name without ".conf",
// which may hold dots: compute-1.example.org.conf). Other files are not
// read. A directory that cannot be read is an error naming it.
func HostFiles(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	out := map[string]string{}
	for _, e := range entries {
		host, ok := strings.CutSuffix(e.Name(), ".conf")
		if !ok || host == "" || e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		out[host] = p
	}
	return out, nil
}

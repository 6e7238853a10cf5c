package archtest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPrereqsAgree: the packages README.md lists under each "# prereqs:
// TARGET" comment are exactly those .ci/run installs under the same
// comment, so CI proves the list a newcomer follows.
func TestPrereqsAgree(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	r, c := prereqs(string(readme)), prereqs(string(ci))
	if len(r) == 0 {
		t.Fatal("README.md lists no '# prereqs:' block")
	}
	for target, pkgs := range r {
		if !slices.Equal(pkgs, c[target]) {
			t.Errorf("%s: README.md lists %v, .ci/run installs %v", target, pkgs, c[target])
		}
	}
	for target := range c {
		if _, ok := r[target]; !ok {
			t.Errorf(".ci/run installs prerequisites of %q, which README.md does not list", target)
		}
	}
}

var prereqLine = regexp.MustCompile(`(?m)^[ \t]*# prereqs: (.+)\n\s*apt-get install ([^\n]+)`)

// prereqs maps each "# prereqs: TARGET" comment to the sorted package
// names of the apt-get install line that follows it (options and
// redirections left out).
func prereqs(s string) map[string][]string {
	m := map[string][]string{}
	for _, sub := range prereqLine.FindAllStringSubmatch(s, -1) {
		var pkgs []string
		for _, w := range strings.Fields(sub[2]) {
			if strings.HasPrefix(w, "-") || strings.ContainsAny(w, ">&|") {
				continue
			}
			pkgs = append(pkgs, w)
		}
		slices.Sort(pkgs)
		m[strings.TrimSpace(sub[1])] = pkgs
	}
	return m
}

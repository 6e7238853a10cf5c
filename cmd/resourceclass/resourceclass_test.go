package resourceclass_test

import (
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestResourceClassShowSet (issue 39): osc's resource class show NAME and
// resource class set NAME (PUT /resource_classes/{name}: create unless it
// exists, print nothing) on both backends: each step's code and output and
// the class list it leaves.
func TestResourceClassShowSet(t *testing.T) {
	cmdtest.OnBothBackends(t, func(t *testing.T, rpctl func(args ...string) (string, string, int)) {
		custom := func() string {
			out, errOut, code := rpctl("resource-class", "list", "-f", "value")
			if code != 0 {
				t.Fatalf("resource-class list: exit %d: %s", code, errOut)
			}
			var c []string
			for _, n := range strings.Fields(out) {
				if strings.HasPrefix(n, "CUSTOM_") {
					c = append(c, n)
				}
			}
			return strings.Join(c, " ")
		}
		for _, st := range []struct {
			name      string
			args      []string
			code      int
			out, errs string
			custom    string // the custom classes afterwards
		}{
			{"show standard", []string{"show", "VCPU", "-f", "value"}, 0, "VCPU\n", "", ""},
			{"show unknown", []string{"show", "CUSTOM_GPU"}, 2, "", "No such resource class CUSTOM_GPU.", ""},
			{"set creates", []string{"set", "CUSTOM_GPU"}, 0, "", "", "CUSTOM_GPU"},
			{"set again: no-op", []string{"set", "CUSTOM_GPU"}, 0, "", "", "CUSTOM_GPU"},
			{"show custom", []string{"show", "CUSTOM_GPU", "-f", "json"}, 0, "{\n  \"name\": \"CUSTOM_GPU\"\n}\n", "", "CUSTOM_GPU"},
			{"show -c name", []string{"show", "CUSTOM_GPU", "-f", "value", "-c", "name"}, 0, "CUSTOM_GPU\n", "", "CUSTOM_GPU"},
			{"set standard: bad request", []string{"set", "VCPU"}, 2, "", "", "CUSTOM_GPU"},
			{"set bad name", []string{"set", "CUSTOM_lower"}, 2, "", "", "CUSTOM_GPU"},
		} {
			out, errOut, code := rpctl(append([]string{"resource-class"}, st.args...)...)
			if code != st.code || out != st.out || !strings.Contains(errOut, st.errs) {
				t.Errorf("%s: resource-class %v: exit %d, want %d\nstdout %q, want %q\nstderr %q, want it to hold %q", st.name, st.args, code, st.code, out, st.out, errOut, st.errs)
			}
			if got := custom(); got != st.custom {
				t.Errorf("%s: custom classes afterwards %q, want %q", st.name, got, st.custom)
			}
		}
	})
}

package provider_test

import (
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestProviderNamesOSCSpellings (issue 39): osc-placement's spellings of the
// provider trait and aggregate writes — set with --trait/--aggregate
// (repeatable), aggregate set --generation, trait delete — on both
// backends, each step's exit code, output and the state it leaves.
func TestProviderNamesOSCSpellings(t *testing.T) {
	const (
		u1   = "11111111-1111-4111-8111-111111111111"
		agg1 = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
		agg2 = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	)
	cmdtest.OnBothBackends(t, func(t *testing.T, rpctl func(args ...string) (string, string, int)) {
		for _, args := range [][]string{{"provider", "create", "cn1", "--uuid", u1}, {"trait", "create", "CUSTOM_GOLD"}} {
			if _, errOut, code := rpctl(args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
		}
		for _, st := range []struct {
			name   string
			args   []string
			code   int
			out    string // the whole standard output (-f value); "-": not checked
			errOut string // a substring of standard error
			traits string // provider trait list -f value afterwards ("-": not checked)
			aggs   string
			gen    string // the provider's generation afterwards
		}{
			{name: "trait set --trait, repeated", args: []string{"provider", "trait", "set", u1, "--trait", "CUSTOM_GOLD", "--trait", "HW_CPU_X86_SSE", "-f", "value"},
				out: "CUSTOM_GOLD\nHW_CPU_X86_SSE\n", traits: "HW_CPU_X86_SSE\nCUSTOM_GOLD\n", aggs: "", gen: "1"},
			{name: "trait set, names both ways", args: []string{"provider", "trait", "set", "cn1", "HW_CPU_X86_AVX", "--trait", "CUSTOM_GOLD", "-f", "value"},
				out: "CUSTOM_GOLD\nHW_CPU_X86_AVX\n", traits: "HW_CPU_X86_AVX\nCUSTOM_GOLD\n", aggs: "", gen: "2"},
			{name: "trait set --trait unknown", args: []string{"provider", "trait", "set", u1, "--trait", "CUSTOM_NOPE"}, code: 2, out: "",
				errOut: "CUSTOM_NOPE", traits: "HW_CPU_X86_AVX\nCUSTOM_GOLD\n", aggs: "", gen: "2"},
			{name: "trait delete", args: []string{"provider", "trait", "delete", u1}, out: "", traits: "", aggs: "", gen: "3"},
			{name: "trait delete, none left", args: []string{"provider", "trait", "delete", "cn1"}, out: "", traits: "", aggs: "", gen: "3"},
			{name: "trait delete unknown provider", args: []string{"provider", "trait", "delete", "nope"}, code: 2, out: "", errOut: `no resource provider with uuid or name "nope"`, traits: "", aggs: "", gen: "3"},
			{name: "aggregate set --aggregate, repeated", args: []string{"provider", "aggregate", "set", u1, "--aggregate", agg2, "--aggregate", agg1, "-f", "value"},
				out: agg2 + "\n" + agg1 + "\n", traits: "", aggs: "-", gen: "4"},
			// osc's --generation: one write at that generation, even
			// when it changes nothing (the generation goes up, as osc's).
			{name: "aggregate set --generation", args: []string{"provider", "aggregate", "set", u1, "--aggregate", agg1, "--generation", "4", "-f", "value"},
				out: agg1 + "\n", traits: "", aggs: agg1 + "\n", gen: "5"},
			{name: "aggregate set --generation, unchanged", args: []string{"provider", "aggregate", "set", u1, "--aggregate", agg1, "--generation", "5", "-f", "value"},
				out: agg1 + "\n", traits: "", aggs: agg1 + "\n", gen: "6"},
			{name: "aggregate set --generation stale", args: []string{"provider", "aggregate", "set", u1, "--aggregate", agg2, "--generation", "4"}, code: 1, out: "",
				errOut: "generation", traits: "", aggs: agg1 + "\n", gen: "6"},
			{name: "aggregate set --generation with --attempts", args: []string{"provider", "aggregate", "set", u1, "--generation", "6", "--attempts", "2"}, code: 255, out: "",
				errOut: "none of the others can be", traits: "", aggs: agg1 + "\n", gen: "6"},
			{name: "aggregate set, none: remove all", args: []string{"provider", "aggregate", "set", u1, "--generation", "6", "-f", "value"},
				out: "", traits: "", aggs: "", gen: "7"},
		} {
			out, errOut, code := rpctl(st.args...)
			if code != st.code || (st.out != "-" && out != st.out) || !strings.Contains(errOut, st.errOut) {
				t.Errorf("%s: %v: exit %d, want %d\nstdout %q, want %q\nstderr %q, want it to hold %q", st.name, st.args, code, st.code, out, st.out, errOut, st.errOut)
			}
			for _, chk := range []struct {
				args []string
				want string
			}{
				{[]string{"provider", "trait", "list", u1, "-f", "value"}, st.traits},
				{[]string{"provider", "aggregate", "list", u1, "-f", "value", "--sort-column", "uuid"}, st.aggs},
				{[]string{"provider", "show", u1, "-f", "value", "-c", "generation"}, st.gen + "\n"},
			} {
				if chk.want == "-" {
					continue
				}
				if got, errOut, code := rpctl(chk.args...); code != 0 || got != chk.want {
					t.Errorf("%s: afterwards %v: exit %d %q, want %q %s", st.name, chk.args, code, got, chk.want, errOut)
				}
			}
		}
	})
}

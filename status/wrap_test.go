package status

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
)

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"short", "Run it.", []string{"Run it."}},
		{"leading newline becomes a space", "\nService user", []string{" Service user"}},
		{"hyphen break", strings.Repeat("x", 50) + " compute-node", []string{strings.Repeat("x", 50) + " compute-", "  node"}},
		{"no break inside digits", strings.Repeat("x", 55) + " 1-2-3-4", []string{strings.Repeat("x", 55), "  1-2-3-4"}},
		{"long word cut at width", strings.Repeat("a", 70), []string{strings.Repeat("a", 60), "  " + strings.Repeat("a", 10)}},
		{"long chunk cut at the width", "see https://docs.openstack.org/latest/nova/admin/configuration/service-user-token.html",
			[]string{"see https://docs.openstack.org/latest/nova/admin/configurati", "  on/service-user-token.html"}},
		{"tabs expand to 8", "a\tb", []string{"a       b"}},
		{"only spaces", "   ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wrap(tc.in, 60, "  "); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wrap(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestWrapMatchesPython compares wrap with Python's textwrap on random text
// made of the characters its chunking rules care about.
func TestWrapMatchesPython(t *testing.T) {
	testdb.RequirePython(t, "textwrap")
	r := rand.New(rand.NewPCG(5, 5))
	pieces := []string{"a", "b", "Z", "é", "ß", "日", "1", "9", "_", "-", "-", "--", " ", " ", "  ", "\t", "\n", ".", ",", "!", "?", "'", "\"", "&", "/", ":", "(", ")", "\u00a0", "word", "compute-node", "x--y", "https://docs.openstack.org/a-b"}
	var cases []string
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		n := r.IntN(120)
		for j := 0; j < n; j++ {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command(testdb.Python, "-c", `
import json, sys, textwrap
print(json.dumps([textwrap.wrap(c, 60, subsequent_indent="  ") for c in json.load(sys.stdin)]))`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, c := range cases {
		got := wrap(c, 60, "  ")
		if len(got) == 0 && len(want[i]) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want[i]) {
			if bad++; bad <= 5 {
				t.Errorf("wrap(%q)\n got  %q\n want %q", c, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases differ from textwrap", bad, len(cases))
	}
}

package cmd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// oscCase is one osc-placement command and rpctl's spelling of it.
type oscCase struct {
	osc, rpctl []string
	version    string // osc's --os-placement-api-version
	list       bool   // a Lister: --sort-column applies
	sortBy     string // a numeric or text column to sort on (lists)
}

// TestDifferentialOSC (issue 21) runs every osc-placement command rpctl
// mirrors against the same real placement-api, in table, json, yaml, csv
// and value, plain, with -c and (lists) --sort-column/--sort-descending,
// and requires byte-equal output. rpctl is given -c with osc's columns, so
// the columns rpctl adds (inventory list's capacity and free, say) are the
// only documented difference and never reach the comparison.
func TestDifferentialOSC(t *testing.T) {
	osc, err := exec.LookPath("/usr/bin/openstack")
	if err != nil {
		if testdb.Required() {
			t.Fatal("openstack not installed (apt-get install python3-openstackclient python3-osc-placement)")
		}
		t.Skip("openstack not installed")
	}
	p := placementtest.New(t)
	api := []string{"--os-endpoint", p.Base, "--os-token", "admin"}
	const (
		cn1  = "11111111-1111-4111-8111-111111111111"
		cn2  = "22222222-2222-4222-8222-222222222222"
		numa = "33333333-3333-4333-8333-333333333333"
		agg  = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
		agg2 = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
		inst = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
		proj = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
	)
	for _, line := range [][]string{
		{"provider", "create", "cmp-b", "--uuid", cn1},
		{"provider", "create", "cmp-a", "--uuid", cn2},
		{"provider", "create", "cmp-b_numa0", "--uuid", numa, "--parent-provider", cn1},
		{"inventory", "set", cn1, "VCPU=96", "VCPU:allocation_ratio=4.0", "MEMORY_MB=523271", "MEMORY_MB:reserved=512", "SRIOV_NET_VF=8", "DISK_GB=1000", "DISK_GB:max_unit=500"},
		{"inventory", "set", cn2, "VCPU=16", "MEMORY_MB=65536"},
		{"inventory", "set", numa, "PCPU=12"},
		{"trait", "create", "CUSTOM_FAST"},
		{"provider", "trait", "set", cn1, "HW_CPU_X86_AVX2", "CUSTOM_FAST", "COMPUTE_VOLUME_MULTI_ATTACH"},
		{"provider", "aggregate", "set", cn1, agg2, agg},
		{"resource-class", "create", "CUSTOM_GPU"},
		{"allocation", "set", inst, "--allocation", "rp=" + cn1 + ",VCPU=4,MEMORY_MB=2048", "--allocation", "rp=" + numa + ",PCPU=2", "--project-id", proj, "--user-id", proj},
	} {
		if _, errOut, code := rpctl(t, append(api, line...)...); code != 0 {
			t.Fatalf("fixture %v: exit %d: %s", line, code, errOut)
		}
	}
	cases := []oscCase{
		{osc: []string{"resource", "provider", "list"}, rpctl: []string{"provider", "list"}, version: "1.39", list: true, sortBy: "name"},
		{osc: []string{"resource", "provider", "list", "--in-tree", cn1}, rpctl: []string{"provider", "list", "--in-tree", cn1}, version: "1.39", list: true, sortBy: "generation"},
		{osc: []string{"resource", "provider", "show", cn1}, rpctl: []string{"provider", "show", cn1}, version: "1.39"},
		{osc: []string{"resource", "provider", "show", numa}, rpctl: []string{"provider", "show", numa}, version: "1.39"},
		{osc: []string{"resource", "provider", "inventory", "list", cn1}, rpctl: []string{"inventory", "list", cn1}, version: "1.39", list: true, sortBy: "max_unit"},
		{osc: []string{"resource", "provider", "inventory", "show", cn1, "DISK_GB"}, rpctl: []string{"inventory", "show", cn1, "DISK_GB"}, version: "1.39"},
		{osc: []string{"resource", "provider", "trait", "list", cn1}, rpctl: []string{"provider", "trait", "list", cn1}, version: "1.39", list: true, sortBy: "name"},
		{osc: []string{"resource", "provider", "aggregate", "list", cn1}, rpctl: []string{"provider", "aggregate", "list", cn1}, version: "1.19", list: true, sortBy: "uuid"},
		{osc: []string{"resource", "provider", "usage", "show", cn1}, rpctl: []string{"usage", "show", cn1}, version: "1.39", list: true, sortBy: "usage"},
		{osc: []string{"resource", "usage", "show", proj}, rpctl: []string{"usage", "project", proj}, version: "1.9", list: true, sortBy: "usage"},
		{osc: []string{"resource", "class", "list"}, rpctl: []string{"resource-class", "list"}, version: "1.39", list: true, sortBy: "name"},
		{osc: []string{"trait", "list"}, rpctl: []string{"trait", "list"}, version: "1.39", list: true, sortBy: "name"},
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OS_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	runOSC := func(args []string) (string, error) {
		c := exec.Command(osc, args...)
		c.Env = env
		out, err := c.Output()
		return string(out), err
	}
	type job struct {
		tc        oscCase
		opts, sel []string
		want      string
		err       error
	}
	var jobs []*job
	for _, tc := range cases {
		base := append([]string{"--os-endpoint", p.Base, "--os-token", "admin", "--os-placement-api-version", tc.version}, tc.osc...)
		js, err := runOSC(append(base, "-f", "json"))
		if err != nil {
			t.Fatalf("openstack %v: %v\n%s", tc.osc, err, js)
		}
		columns := oscColumns(t, js, tc.list)
		// Every format plain (rpctl given osc's columns), and with -c and
		// (lists) --sort-column/--sort-descending.
		variants := [][]string{nil, {"-c", columns[0]}}
		if tc.list {
			variants[1] = []string{"-c", columns[0], "-c", columns[len(columns)-1], "--sort-column", tc.sortBy, "--sort-descending"}
		}
		for _, format := range []string{"table", "json", "yaml", "csv", "value"} {
			if format == "csv" && !tc.list {
				continue // cliff's ShowOne has no csv
			}
			for _, v := range variants {
				sel := v
				if len(v) == 0 {
					for _, c := range columns {
						sel = append(sel, "-c", c)
					}
				}
				jobs = append(jobs, &job{tc: tc, opts: append(append(append([]string{}, base...), "-f", format), v...), sel: append([]string{"-f", format}, sel...)})
			}
		}
	}
	// osc's start-up dominates: run three at a time.
	next := make(chan *job)
	done := make(chan struct{})
	for range 3 {
		go func() {
			for j := range next {
				j.want, j.err = runOSC(j.opts)
			}
			done <- struct{}{}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	for range 3 {
		<-done
	}
	for _, j := range jobs {
		if j.err != nil {
			t.Errorf("openstack %v: %v", j.opts, j.err)
			continue
		}
		args := append(append(append([]string{}, api...), "--os-placement-api-version", j.tc.version), j.tc.rpctl...)
		got, errOut, code := rpctl(t, append(args, j.sel...)...)
		if code != 0 || got != j.want {
			t.Errorf("rpctl %v %v vs openstack %v: exit %d %s\nrpctl:\n%s\nosc:\n%s", j.tc.rpctl, j.sel, j.opts[6:], code, errOut, got, j.want)
		}
	}
	if len(jobs) < 40 {
		t.Errorf("only %d comparisons", len(jobs))
	}
	t.Logf("%d commands x formats x options compared byte for byte", len(jobs))
}

// oscColumns are the columns of osc's json answer, in its order.
func oscColumns(t *testing.T, js string, list bool) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	if list {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			t.Fatalf("osc json is not a list: %s", js)
		}
		if !dec.More() {
			t.Fatalf("osc listed nothing: %s", js)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("osc json: %s", js)
	}
	var cols []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return cols
}

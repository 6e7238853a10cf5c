package candidates_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	candidatescmd "github.com/rpctl/rpctl/cmd/candidates"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// candidatesCloud writes candidates.ScaleInput(250) (50 sharing storage
// providers, 50 compute trees of a host, two NUMA nodes and a PF, traits,
// aggregates, usages) into an embedded database file.
func candidatesCloud(t *testing.T) (string, *candidates.Model) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cloud.db")
	db, err := storage.Open(ctx, dsn.SQLiteFile(path), storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.Init(ctx, db, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	in := candidates.ScaleInput(250)
	if err := placementdb.WriteSyntheticPlacement(ctx, db, in); err != nil {
		t.Fatal(err)
	}
	m, err := candidates.NewModel(in)
	if err != nil {
		t.Fatal(err)
	}
	return path, m
}

func TestCandidatesCommand(t *testing.T) {
	path, model := candidatesCloud(t)
	direct := func(q string, mv candidates.Microversion) string {
		req, err := candidates.ParseQuery(q, mv)
		if err != nil {
			t.Fatal(err)
		}
		r, err := model.Search(context.Background(), req, candidates.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := r.MarshalPlacement(mv)
		return string(b) + "\n"
	}
	agg := candidates.SyntheticUUID(5, 7)
	cases := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings
		stderr   string
		jsonLike string // a query whose direct answer stdout must equal
		mv       candidates.Microversion
	}{
		{name: "json is Placement's body",
			args:     []string{"-f", "json", "--resources", "VCPU:2,MEMORY_MB:1024,DISK_GB:1", "--required", "HW_CPU_X86_AVX2", "--limit", "7"},
			jsonLike: "resources=VCPU:2,MEMORY_MB:1024,DISK_GB:1&required=HW_CPU_X86_AVX2&limit=7", mv: 39},
		{name: "json at 1.12",
			args:     []string{"-f", "json", "--microversion", "1.12", "--query", "resources=DISK_GB:5"},
			jsonLike: "resources=DISK_GB:5", mv: 12},
		{name: "json at 1.21 with member_of",
			args:     []string{"-f", "json", "--microversion", "1.21", "--query", "resources=DISK_GB:5", "--member-of", agg},
			jsonLike: "resources=DISK_GB:5&member_of=" + agg, mv: 21},
		{name: "group flag",
			args: []string{"-f", "json", "--resources", "DISK_GB:10", "--group", "_NET:resources=SRIOV_NET_VF:1,required=CUSTOM_PHYSNET1",
				"--group", "_C:resources=VCPU:1,MEMORY_MB:64,required=HW_NUMA_ROOT", "--group-policy", "none", "--same-subtree", "_NET,_C", "--limit", "5"},
			jsonLike: "resources=DISK_GB:10&resources_NET=SRIOV_NET_VF:1&required_NET=CUSTOM_PHYSNET1&resources_C=VCPU:1,MEMORY_MB:64&required_C=HW_NUMA_ROOT&group_policy=none&same_subtree=_NET,_C&limit=5", mv: 39},
		{name: "table",
			args:   []string{"--resources", "VCPU:1,DISK_GB:10", "--limit", "2"},
			stdout: []string{"host", "used_after", "compute-0", "2 allocation candidates on 1 host (--limit 2)."}},
		{name: "in-tree by name",
			args:   []string{"--resources", "SRIOV_NET_VF:1", "--in-tree", "compute-3"},
			stdout: []string{"compute-3-pf", "1 allocation candidate on 1 host."}},
		{name: "in-tree unknown name",
			args: []string{"--resources", "VCPU:1", "--in-tree", "nosuchhost"}, code: 2,
			stderr: `in_tree "nosuchhost": no resource provider has that name or UUID`},
		{name: "invalid query exits 2 with Placement's message",
			args: []string{"--resources", "VCPU:x"}, code: 2,
			stderr: "invalid request, Placement would answer 400: Requested resource VCPU expected positive integer amount. Got: x."},
		{name: "invalid query -f json prints Placement's error body",
			args: []string{"-f", "json", "--query", "resources=VCPU:1&group_policy=bogus"}, code: 2,
			stdout: []string{`{"errors": [{"status": 400, "title": "Bad Request"`}},
		{name: "unknown trait is Placement's 400",
			args: []string{"--resources", "VCPU:1", "--required", "CUSTOM_NOPE"}, code: 2,
			stderr: "No such trait(s): CUSTOM_NOPE."},
		{name: "microversion too new",
			args: []string{"--resources", "VCPU:1", "--microversion", "1.40"}, code: 2,
			stderr: "Unacceptable version header: 1.40"},
		{name: "same_subtree before 1.36",
			args: []string{"--resources", "VCPU:1", "--microversion", "1.35", "--same-subtree", "_A"}, code: 2,
			stderr: "invalid request, Placement would answer 400"},
		{name: "empty result exits 0",
			args:   []string{"--resources", "VCPU:100000"},
			stdout: []string{"No allocation candidates.", "--explain"}},
		{name: "explain",
			args:   []string{"--resources", "VCPU:20", "--required", "CUSTOM_RACK_A", "--explain"},
			stdout: []string{"hosts without a candidate", "missing trait", "not enough free", "reason"}},
		{name: "bad strategy",
			args: []string{"--resources", "VCPU:1", "--strategy", "sideways"}, code: 2,
			stderr: `invalid --strategy "sideways"`},
		{name: "bad group flag",
			args: []string{"--group", "_X:resourses=VCPU:1"}, code: 2,
			stderr: `"resourses=VCPU:1" is not one of resources=`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", path, "candidates"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errOut)
			}
			for _, s := range c.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if c.stderr != "" && !strings.Contains(errOut, c.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, c.stderr)
			}
			if strings.Count(errOut, "\n") > 1 {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if c.jsonLike != "" {
				if want := direct(c.jsonLike, c.mv); out != want {
					t.Errorf("stdout differs from the core's answer to %s\ngot:  %.400s\nwant: %.400s", c.jsonLike, out, want)
				}
				if len(out) < 60 {
					t.Errorf("suspiciously small answer: %s", out)
				}
			}
		})
	}
}

func TestCandidatesNoDatabase(t *testing.T) {
	_, errOut, code := cmdtest.Rpctl(t, "candidates", "--resources", "VCPU:1")
	if code != 255 || !strings.Contains(errOut, "no database configured for Placement") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	_, errOut, code = cmdtest.Rpctl(t, "--placement-db", "mysql+pymysql://u:secret@127.0.0.1:1/placement", "candidates", "--resources", "VCPU:1")
	if code != 255 || strings.Contains(errOut, "secret") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("dead database: exit %d: %q", code, errOut)
	}
}

func TestComposeCandidatesQuery(t *testing.T) {
	ident := func(s string) (string, error) { return "uuid-of-" + s, nil }
	cases := []struct {
		name string
		o    candidatescmd.CandidatesOptions
		want string
	}{
		{"empty", candidatescmd.CandidatesOptions{}, ""},
		{"raw first", candidatescmd.CandidatesOptions{Query: "?resources=VCPU:1", Required: []string{"!A,B"}}, "resources=VCPU:1&required=!A,B"},
		{"repeats", candidatescmd.CandidatesOptions{MemberOf: []string{"in:a,b", "!c"}, RootRequired: []string{"X", "!Y"}},
			"member_of=in:a,b&member_of=!c&root_required=X&root_required=!Y"},
		{"group with commas in values", candidatescmd.CandidatesOptions{Groups: []string{"_NET1:resources=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:10,required=A,!B,in_tree=cn1"}},
			"resources_NET1=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:10&required_NET1=A,!B&in_tree_NET1=uuid-of-cn1"},
		{"in-tree and limit", candidatescmd.CandidatesOptions{InTree: "cn1", Limit: 0, LimitSet: true}, "in_tree=uuid-of-cn1&limit=0"},
		{"escaping", candidatescmd.CandidatesOptions{Resources: "VCPU:1&limit=1", GroupPolicy: "iso late"}, "resources=VCPU:1%26limit%3D1&group_policy=iso+late"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := candidatescmd.ComposeCandidatesQuery(&c.o, ident)
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	if _, err := candidatescmd.ComposeCandidatesQuery(&candidatescmd.CandidatesOptions{Groups: []string{"nocolon"}}, ident); err == nil {
		t.Error("a --group without SUFFIX: must be refused")
	}
}

package cmdtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
)

// HealSide is one copy of the cloud: Nova's cell, API and Placement
// databases and a placement-api on the latter.
type HealSide struct {
	Cell, API, Placement *testdb.MySQL
	URL                  string
	Conf                 string
}

// CloneSide copies a side's three databases and starts a placement-api on
// the copy of Placement's.
func CloneSide(t testing.TB, src *HealSide) *HealSide {
	t.Helper()
	return CloneSideWith(t, src, testdb.PlacementAPI)
}

// CloneSideWith is CloneSide with the placement-api startAPI starts (another
// release's: testdb.Chroot.PlacementAPI).
func CloneSideWith(t testing.TB, src *HealSide, startAPI func(t testing.TB, sqlalchemyURL string) string) *HealSide {
	t.Helper()
	s := &HealSide{Cell: testdb.NewMySQL(t), API: testdb.NewMySQL(t), Placement: testdb.NewMySQL(t)}
	CloneDB(t, src.Cell, s.Cell)
	CloneDB(t, src.API, s.API)
	CloneDB(t, src.Placement, s.Placement)
	if _, err := s.API.Admin.Exec(fmt.Sprintf("UPDATE `%s`.cell_mappings SET database_connection = ? WHERE name = 'cell1'", s.API.Name), s.Cell.URL); err != nil {
		t.Fatal(err)
	}
	s.URL = startAPI(t, s.Placement.URL)
	return s
}

// WriteNovaConf writes the nova.conf both tools read: Nova's heal needs
// [placement] pointed at the placement-api; auth_type none needs no
// Keystone.
func (s *HealSide) WriteNovaConf(t testing.TB) {
	t.Helper()
	s.Conf = filepath.Join(t.TempDir(), "nova.conf")
	body := fmt.Sprintf(`[DEFAULT]
transport_url = fake://
[database]
connection = %s
[api_database]
connection = %s
[placement_database]
connection = %s
[placement]
auth_type = admin_token
endpoint = %s
token = admin
`, s.Cell.URL, s.API.URL, s.Placement.URL, s.URL)
	if err := os.WriteFile(s.Conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ConsumersView is GET /allocations/{consumer} of every consumer, and each
// provider's usages, as the real Placement answers.
func (s *HealSide) ConsumersView(t *testing.T, consumers, providers []string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, mv := range []string{"1.28", "1.38"} {
		for _, c := range consumers {
			code, body := testdb.PlacementGet(t, s.URL, "/allocations/"+c, mv)
			var v any
			json.Unmarshal(body, &v)
			out[mv+" /allocations/"+c] = fmt.Sprint(code, " ", canonical(v))
		}
	}
	for _, p := range providers {
		for _, path := range []string{"/resource_providers/" + p, "/resource_providers/" + p + "/usages", "/resource_providers/" + p + "/allocations"} {
			code, body := testdb.PlacementGet(t, s.URL, path, "1.28")
			var v map[string]any
			json.Unmarshal(body, &v)
			delete(v, "links")
			out[path] = fmt.Sprint(code, " ", canonical(v))
		}
	}
	return out
}

func canonical(v any) string {
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

// novaManage runs nova-manage commands one after another in one Python
// process (cmd/testdata/nova_manage_steps.py), since importing Nova takes
// seconds.
type novaManage struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func StartNovaManage(t testing.TB) *novaManage {
	t.Helper()
	return StartNovaManageCmd(t, exec.Command(testdb.Python, NovaManageSteps()))
}

// NovaManageSteps is the path of the script StartNovaManage runs.
func NovaManageSteps() string {
	return filepath.Join(testdb.RepoRoot(), "cmd", "testdata", "nova_manage_steps.py")
}

// StartNovaManageCmd runs cmd, a python3 running NovaManageSteps' script
// (another release's: inside its chroot), as StartNovaManage does.
func StartNovaManageCmd(t testing.TB, cmd *exec.Cmd) *novaManage {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return &novaManage{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// Run runs one nova-manage command and returns its output and exit code.
func (n *novaManage) Run(t testing.TB, args ...string) (string, int) {
	t.Helper()
	b, _ := json.Marshal(args)
	if _, err := fmt.Fprintf(n.in, "%s\n", b); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for {
		line, err := n.out.ReadString('\n')
		if rc, ok := strings.CutPrefix(line, "@@rc "); ok {
			code, _ := strconv.Atoi(strings.TrimSpace(rc))
			return out.String(), code
		}
		out.WriteString(line)
		if err != nil {
			t.Fatalf("nova-manage %v: %v\n%s", args, err, out.String())
		}
	}
}

// ReferenceSide is a cloud's three databases with Nova's and Placement's
// own schemas (scripts/reference-dbsync.sh), without the placement-api.
func ReferenceSide(tb testing.TB) *HealSide {
	tb.Helper()
	s := &HealSide{Cell: testdb.NewMySQL(tb), API: testdb.NewMySQL(tb), Placement: testdb.NewMySQL(tb)}
	prefix := s.Cell.URL[:strings.LastIndex(s.Cell.URL, "/")]
	script := filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh")
	if out, err := exec.Command(script, prefix, s.Cell.Name, s.API.Name, s.Placement.Name).CombinedOutput(); err != nil {
		tb.Fatalf("reference db sync: %v\n%s", err, out)
	}
	return s
}

func PyList(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `\'`) + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

package storage_test

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// expandCases are templated cell mappings with what Nova 26.2.2's
// CellMapping._format_url makes of them.
var expandCases = []struct{ tmpl, local, want string }{
	{"{scheme}://{username}:{password}@{hostname}/{path}",
		"mysql+pymysql://nova:s3cret@db.example:3306/nova?charset=utf8",
		"mysql+pymysql://nova:s3cret@db.example/nova"},
	{"{scheme}://{username}:{password}@{hostname}/{path}",
		"mysql+pymysql://nova:p%40ss%2Fw@DB.Example:3307/nova",
		"mysql+pymysql://nova:p%40ss%2Fw@db.example/nova"},
	{"{scheme}://{username}:{password}@{hostname}:{port}/{path}_cell1?{query}",
		"mysql+pymysql://nova:a:b@db:3307/nova?charset=utf8#frag",
		"mysql+pymysql://nova:a:b@db:3307/nova_cell1?charset=utf8"},
	{"mysql+pymysql://nova:pw@cell2-db/nova_cell2", "mysql+pymysql://nova:pw@db/nova",
		"mysql+pymysql://nova:pw@cell2-db/nova_cell2"},
}

func TestExpandCellURL(t *testing.T) {
	for _, c := range expandCases {
		got, err := storage.ExpandCellURL(c.tmpl, c.local)
		if err != nil || got != c.want {
			t.Errorf("ExpandCellURL(%q, %q) = %q, %v; want %q", c.tmpl, c.local, got, err, c.want)
		}
	}
	for _, bad := range [][2]string{
		{"{scheme}://{user}@{hostname}/x", "mysql://u:p@h/db"},
		{"{scheme://x", "mysql://u:p@h/db"},
		{"{scheme}://{hostname}/x", ""},
	} {
		if got, err := storage.ExpandCellURL(bad[0], bad[1]); err == nil {
			t.Errorf("ExpandCellURL(%q, %q) = %q, want an error", bad[0], bad[1], got)
		}
	}
}

// TestExpandCellURLMatchesNova asks the real Nova what the cases expand to.
func TestExpandCellURLMatchesNova(t *testing.T) {
	testdb.RequirePython(t, "nova.objects.cell_mapping")
	var pairs [][2]string
	for _, c := range expandCases {
		pairs = append(pairs, [2]string{c.tmpl, c.local})
	}
	in, _ := json.Marshal(pairs)
	out, err := exec.Command(testdb.Python, "-c", `
import json, sys
from nova.objects.cell_mapping import CellMapping
print(json.dumps([CellMapping._format_url(t, l) for t, l in json.loads(sys.argv[1])]))`, string(in)).Output()
	if err != nil {
		t.Fatalf("nova: %v", err)
	}
	var nova []string
	if err := json.Unmarshal(out, &nova); err != nil {
		t.Fatalf("nova printed %q: %v", out, err)
	}
	for i, c := range expandCases {
		if nova[i] != c.want {
			t.Errorf("Nova expands %q from %q to %q, the test expects %q", c.tmpl, c.local, nova[i], c.want)
		}
	}
}

package cmd_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCloud is a small deterministic sample cloud in an embedded file.
func goldenCloud(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "cloud.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--nodes", "5", "--seed", "7"); code != 0 {
		t.Fatalf("sample-cloud: %s", errOut)
	}
	return db
}

// TestOutputOptionsGolden: cliff's options on two commands, against
// reviewed files in testdata/golden (go test ./cmd -run Golden -update
// rewrites them).
func TestOutputOptionsGolden(t *testing.T) {
	db := goldenCloud(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"compute-node-columns-sorted.txt", []string{"compute-node", "list", "-c", "host", "-c", "id", "-c", "vcpus", "--sort-column", "vcpus", "--sort-descending"}},
		{"compute-node-csv.txt", []string{"compute-node", "list", "-f", "csv", "-c", "id", "-c", "uuid", "-c", "cpu_allocation_ratio", "-c", "deleted"}},
		{"compute-node-csv-minimal.txt", []string{"compute-node", "list", "-f", "csv", "--quote", "minimal", "--sort-column", "memory_mb"}},
		{"compute-node-value.txt", []string{"compute-node", "list", "-f", "value", "-c", "hypervisor_hostname", "-c", "ram_allocation_ratio"}},
		{"compute-node-json.txt", []string{"compute-node", "list", "-f", "json", "-c", "id", "-c", "uuid", "-c", "cpu_allocation_ratio", "-c", "deleted"}},
		{"compute-node-json-noindent.txt", []string{"compute-node", "list", "-f", "json", "--noindent", "-c", "id", "-c", "host"}},
		{"compute-node-yaml.txt", []string{"compute-node", "list", "-f", "yaml", "-c", "id", "-c", "uuid", "-c", "ram_allocation_ratio"}},
		{"compute-node-max-width.txt", []string{"compute-node", "list", "--max-width", "70"}},
		{"ratios-dry-run-sorted.txt", []string{"migrate", "ratios", "--dry-run", "--sort-column", "ratio", "--sort-column", "id", "-c", "ratio", "-c", "id", "-c", "old", "-c", "new"}},
		{"ratios-dry-run-csv.txt", []string{"migrate", "ratios", "--dry-run", "-f", "csv", "--sort-column", "new", "--sort-descending"}},
		{"ratios-dry-run-value.txt", []string{"migrate", "ratios", "--dry-run", "-f", "value", "-c", "id", "-c", "ratio", "-c", "new"}},
		{"ratios-dry-run-json.txt", []string{"migrate", "ratios", "--dry-run", "-f", "json", "-c", "id", "-c", "ratio", "-c", "old", "-c", "new"}},
		{"ratios-dry-run-yaml.txt", []string{"migrate", "ratios", "--dry-run", "-f", "yaml", "-c", "id", "-c", "old", "-c", "option"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, tc.args...)...)
			if code != 0 {
				t.Fatalf("%q: exit %d: %s", tc.args, code, errOut)
			}
			path := filepath.Join("testdata", "golden", tc.name)
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if out != string(want) {
				t.Errorf("%q:\n%s\nwant (%s):\n%s", tc.args, out, path, want)
			}
		})
	}
}

// TestValueFormat: -f value is one value per column separated by single
// spaces, no trailing space, on every row.
func TestValueFormat(t *testing.T) {
	db := goldenCloud(t)
	out, _, code := cmdtest.Rpctl(t, "--db", db, "compute-node", "list", "-f", "value")
	if code != 0 {
		t.Fatal(code)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasSuffix(line, " ") || strings.Contains(line, "  ") || len(strings.Fields(line)) != 12 {
			t.Errorf("not 12 single-spaced values: %q", line)
		}
	}
}

var tableHeader = regexp.MustCompile(`(?m)^\|(.*)\|$`)

// TestColumnNamesSame: for every command that prints rows, the table's
// headers, the csv header and the json keys are the same snake_case names.
func TestColumnNamesSame(t *testing.T) {
	db := goldenCloud(t)
	for _, args := range [][]string{
		{"compute-node", "list"},
		{"compute-node", "list", "--long"},
		{"migrate", "ratios", "--dry-run"},
		{"migrate", "inventory", "--dry-run"},
		{"init"},
		{"migrate", "all", "--max-count", "1"},
		{"candidates", "--resources", "VCPU:1"},
	} {
		with := append([]string{"--db", db}, args...)
		table, errOut, code := cmdtest.Rpctl(t, with...)
		if code > 1 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		m := tableHeader.FindStringSubmatch(table)
		if m == nil {
			t.Fatalf("%q: no table:\n%s", args, table)
		}
		var headers []string
		for _, h := range strings.Split(m[1], "|") {
			headers = append(headers, strings.TrimSpace(h))
		}
		for _, h := range headers {
			if !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(h) {
				t.Errorf("%q: column %q is not snake_case", args, h)
			}
		}
		csvOut, _, _ := cmdtest.Rpctl(t, append(with, "-f", "csv", "--quote", "minimal")...)
		if got := strings.Split(strings.SplitN(csvOut, "\n", 2)[0], ","); !slices.Equal(got, headers) {
			t.Errorf("%q: csv header %q, table %q", args, got, headers)
		}
		if args[0] == "candidates" {
			continue // -f json is Placement's own body
		}
		js, _, _ := cmdtest.Rpctl(t, append(with, "-f", "json")...)
		dec := json.NewDecoder(strings.NewReader(js))
		var keys []string
		// The first object's keys, in order.
		for depth := 0; dec.More() || depth > 0; {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("%q: json: %v\n%s", args, err, js)
			}
			switch v := tok.(type) {
			case json.Delim:
				if v == '{' || v == '[' {
					depth++
				} else {
					depth--
				}
			case string:
				if depth == 2 && len(keys) < len(headers) && !slices.Contains(keys, v) {
					keys = append(keys, v)
					dec.Token() // the value
				}
			}
			if len(keys) == len(headers) {
				break
			}
		}
		if !slices.Equal(keys, headers) {
			t.Errorf("%q: json keys %q, table headers %q", args, keys, headers)
		}
	}
}

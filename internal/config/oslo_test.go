package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/testdb"
)

// osloScript reads the files with oslo.config's ConfigOpts, the options
// registered as Nova registers them (strings, no default), and prints every
// value after template substitution, or the name of the exception reading
// it raised.
const osloScript = `
import json, sys
from oslo_config import cfg
spec = json.loads(sys.argv[1])
conf = cfg.ConfigOpts()
for group, names in spec["opts"].items():
    conf.register_opts([cfg.StrOpt(n) for n in names], group=None if group == "DEFAULT" else group)
conf(args=spec["args"], project="nova", default_config_files=spec["defaults"])
out = {}
for group, names in spec["opts"].items():
    for n in names:
        try:
            v = conf[n] if group == "DEFAULT" else conf[group][n]
        except cfg.Error as e:
            out[group + "." + n] = {"error": type(e).__name__}
            continue
        out[group + "." + n] = "" if v is None else v
print(json.dumps(out))
`

var osloOpts = map[string][]string{
	"DEFAULT": {"my_ip", "host", "state_path", "cpu_allocation_ratio", "note", "missing", "lock_path",
		"unknown_ref", "unknown_group_ref", "no_group_ref", "default_group_ref", "nested_unknown", "unset_ref", "python_letter_ref"},
	"database":           {"connection"},
	"api_database":       {"connection"},
	"placement_database": {"connection"},
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMatchesOsloConfig: default files, --config-dir (every *.conf in name
// order, after the files) and $option / ${group.option} substitution
// give what oslo_config.cfg gives on the same files.
func TestMatchesOsloConfig(t *testing.T) {
	testdb.RequirePython(t, "oslo_config.cfg")
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc-nova.conf")
	writeFile(t, etc, `[DEFAULT]
my_ip = 10.0.0.5
host = cmp-$my_ip
state_path = /var/lib/nova
lock_path = $state_path/lock
cpu_allocation_ratio = 4.0
unknown_ref = x$nosuch
unknown_group_ref = ${database.nosuch}
no_group_ref = ${nogroup.x}
default_group_ref = ${DEFAULT.my_ip}
nested_unknown = a $unknown_ref
unset_ref = $missing
python_letter_ref = x$ſ
[database]
connection = mysql+pymysql://nova:pa$$w0rd@$my_ip/nova
[api_database]
connection = mysql+pymysql://nova:se\$ret@${my_ip}:3306/nova_api
`)
	extra := filepath.Join(dir, "extra.conf")
	writeFile(t, extra, `[DEFAULT]
my_ip = 192.0.2.1
[placement_database]
connection = sqlite:///${state_path}/p.db
`)
	confDir := filepath.Join(dir, "nova.conf.d")
	os.Mkdir(confDir, 0o755)
	writeFile(t, filepath.Join(confDir, "20-b.conf"), `[DEFAULT]
cpu_allocation_ratio = 8.0
note = $$literal $1 ${my_ip}x $host$ ${unclosed
[placement_database]
connection = ${database.connection}_placement
`)
	writeFile(t, filepath.Join(confDir, "10-a.conf"), `[DEFAULT]
my_ip = 10.0.0.6
`)
	writeFile(t, filepath.Join(confDir, "30-ignored.txt"), "[DEFAULT]\nmy_ip = 6.6.6.6\n")

	// With the default file read, unsetRefs are refused; extra.conf alone
	// leaves ${state_path} unset, which oslo.config reads as "" (Nova
	// registers it with a default rpctl does not know).
	extraOnly := map[string]string{"placement_database.connection": "${state_path}"}
	for _, tc := range []struct {
		name     string
		defaults []string
		files    []string
		dirs     []string
		refused  map[string]string // option → the reference its error names
	}{
		{"default file (an absent one skipped)", []string{etc}, nil, nil, unsetRefs},
		{"default file and --config-dir", []string{etc}, nil, []string{confDir}, unsetRefs},
		{"--config-file twice and --config-dir", []string{etc}, []string{extra, etc}, []string{confDir}, unsetRefs},
		{"--config-file only", []string{etc}, []string{extra}, nil, extraOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{}
			for _, f := range tc.files {
				args = append(args, "--config-file", f)
			}
			for _, d := range tc.dirs {
				args = append(args, "--config-dir", d)
			}
			spec, _ := json.Marshal(map[string]any{"opts": osloOpts, "args": args, "defaults": tc.defaults})
			out, err := exec.Command(testdb.Python, "-c", osloScript, string(spec)).CombinedOutput()
			if err != nil {
				t.Fatalf("oslo.config: %v\n%s", err, out)
			}
			var want map[string]any
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatalf("%v: %s", err, out)
			}

			t.Setenv("RPCTL_DEFAULT_CONFIG_FILES", tc.defaults[0]+":"+filepath.Join(dir, "absent.conf"))
			files := tc.files
			if len(files) == 0 {
				files = config.ExistingDefaultFiles()
			}
			files, err = config.WithDirs(files, tc.dirs)
			if err != nil {
				t.Fatal(err)
			}
			ini := config.NewINI()
			for _, f := range files {
				fh, err := os.Open(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := ini.Parse(fh, f); err != nil {
					t.Fatal(err)
				}
				fh.Close()
			}
			refused := 0
			for group, names := range osloOpts {
				for _, n := range names {
					got, src, _, err := ini.Lookup(group, n)
					w := want[group+"."+n]
					if ref, ok := tc.refused[group+"."+n]; ok {
						if err == nil {
							t.Errorf("[%s] %s = %q accepted, oslo.config %v", group, n, got, w)
						} else if head := fmt.Sprintf("%s: [%s] %s: ", src, group, n); !strings.HasPrefix(err.Error(), head) || !strings.Contains(err.Error(), ref) {
							t.Errorf("[%s] %s: error %q does not start %q or name %s", group, n, err, head, ref)
						} else {
							refused++
						}
						continue
					}
					if err != nil {
						t.Errorf("[%s] %s: %v, oslo.config %v", group, n, err, w)
					} else if got != w {
						t.Errorf("[%s] %s = %q, oslo.config %v", group, n, got, w)
					}
				}
			}
			if refused != len(tc.refused) {
				t.Errorf("%d options refused, want %d", refused, len(tc.refused))
			}
			// rpctl refuses exactly what oslo.config raises on, and the
			// references to a registered option's default.
			for k, w := range want {
				_, raised := w.(map[string]any)
				_, refused := tc.refused[k]
				if raised != (refused && !osloDefaults[k]) {
					t.Errorf("%s: oslo.config reads %v, rpctl refuses: %v", k, w, refused)
				}
			}
		})
	}
}

// osloDefaults are the refused options oslo.config reads with the default
// of a registered option.
var osloDefaults = map[string]bool{"DEFAULT.unset_ref": true, "placement_database.connection": true}

// unsetRefs are the test's options that refer to an option set in no file,
// with the reference their error must name: oslo.config raises on all but
// unset_ref (whose $missing Nova registers without a default, so
// oslo.config reads ""; rpctl cannot know a registered option's default and
// refuses it too).
var unsetRefs = map[string]string{
	"DEFAULT.unknown_ref":       "$nosuch",
	"DEFAULT.unknown_group_ref": "${database.nosuch}",
	"DEFAULT.no_group_ref":      "${nogroup.x}",
	"DEFAULT.default_group_ref": "${DEFAULT.my_ip}",
	"DEFAULT.nested_unknown":    "$nosuch",
	"DEFAULT.unset_ref":         "$missing",
	// Python's case-insensitive [a-z] holds ſ: oslo.config reads a name.
	"DEFAULT.python_letter_ref": "$ſ",
}

// TestSubstitutionLoop: a cycle is an error naming the option, not a hang.
func TestSubstitutionLoop(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nova.conf")
	writeFile(t, p, "[DEFAULT]\na = $b\nb = x$a\n[database]\nconnection = $a\n")
	ini := config.NewINI()
	fh, _ := os.Open(p)
	defer fh.Close()
	if err := ini.Parse(fh, p); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ini.Lookup("database", "connection"); err == nil {
		t.Error("loop accepted")
	}
}

// TestSubstitutionBounded (issue 37 row 11): a substitution that doubles
// at each level ($a1 = $a0$a0, …, forty levels: 2^40 references) or grows
// a value past MaxSubstitutionBytes is refused naming the option and its
// line, after at most MaxSubstitutionRefs references; substitutions that
// stay within the bounds are still answered in full.
func TestSubstitutionBounded(t *testing.T) {
	levels := func(n int, leaf string) string {
		var b strings.Builder
		b.WriteString("[DEFAULT]\na0 = " + leaf + "\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "a%d = $a%d$a%d\n", i, i-1, i-1)
		}
		fmt.Fprintf(&b, "[database]\nconnection = $a%d\n", n)
		return b.String()
	}
	for _, tc := range []struct {
		name, conf string
		want       string // "" is a value of wantLen bytes
		wantLen    int
	}{
		{"forty levels of empty", levels(40, ""), "nova.conf:44: [database] connection: template substitution expands to more than", 0},
		{"forty levels of x", levels(40, "x"), "nova.conf:44: [database] connection: template substitution expands to more than", 0},
		{"twelve levels of 1 KiB", levels(12, strings.Repeat("x", 1024)), "[database] connection: template substitution expands to more than", 0},
		{"ten levels of x", levels(10, "x"), "", 1024},
		{"one long value", "[DEFAULT]\na = " + strings.Repeat("y", 1<<19) + "\n[database]\nconnection = $a\n", "", 1 << 19},
	} {
		ini := config.NewINI()
		if err := ini.Parse(strings.NewReader(tc.conf), "nova.conf"); err != nil {
			t.Fatal(err)
		}
		v, _, _, err := ini.Lookup("database", "connection")
		switch {
		case tc.want == "" && (err != nil || len(v) != tc.wantLen):
			t.Errorf("%s: %d bytes, %v; want %d bytes", tc.name, len(v), err, tc.wantLen)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestLongLineNamed (issue 37 row 14): a line past the 4 MiB a line may
// hold is an error naming the file and the line.
func TestLongLineNamed(t *testing.T) {
	conf := "[DEFAULT]\nok = 1\nbig = " + strings.Repeat("z", 20<<20) + "\n"
	err := config.NewINI().Parse(strings.NewReader(conf), "nova.conf")
	if err == nil || !strings.Contains(err.Error(), "nova.conf:3: a line longer than 4 MiB") {
		t.Errorf("%v, want nova.conf:3 named", err)
	}
}

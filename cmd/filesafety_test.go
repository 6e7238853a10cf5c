package cmd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
)

// outputPathCases are the output path flags and a command line that writes
// each (PATH is replaced by the path under test).
var outputPathCases = map[string][]string{
	"--log-file": {"--log-file", "PATH", "compute-node", "list"},
	"--out":      {"claims", "snapshot", "--out", "PATH"},
	"--plot":     {"capacity", "--flavor", "m1.small", "--plot", "PATH"},
}

// TestPathFlagsDeclared: every flag that takes a path says whether it is
// written or read, and every written one is in outputPathCases, so that
// TestOutputFilesNeverOverwrite covers a new one.
func TestPathFlagsDeclared(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			kind := fl.Annotations[cmdutil.PathFlagAnnotation]
			looksLikePath := strings.Contains(strings.ToLower(fl.Usage), "file") || strings.Contains(fl.Usage, "directory") || strings.Contains(fl.Usage, "database URL")
			if looksLikePath && fl.Value.Type() != "bool" && len(kind) == 0 {
				t.Errorf("%s --%s (%q) looks like it takes a path: mark it input or output (markPathFlags)", c.CommandPath(), fl.Name, fl.Usage)
			}
			if len(kind) == 1 && kind[0] == "output" {
				seen["--"+fl.Name] = true
				if _, ok := outputPathCases["--"+fl.Name]; !ok {
					t.Errorf("%s --%s writes a file but TestOutputFilesNeverOverwrite has no case for it", c.CommandPath(), fl.Name)
				}
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	for name := range outputPathCases {
		if !seen[name] {
			t.Errorf("outputPathCases has %s, which no command declares as an output path", name)
		}
	}
}

// TestOutputFilesNeverOverwrite: for every output path flag, an existing
// file is refused (exit 2, named, untouched) unless --force; the database
// being read is refused even with --force, by any name; a new file appears
// whole with no temporary file left beside it.
func TestOutputFilesNeverOverwrite(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	dbBytes, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for flag, line := range outputPathCases {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			run := func(path string, extra ...string) (string, string, int) {
				args := append([]string{"--db", db}, extra...)
				for _, a := range line {
					if a == "PATH" {
						a = path
					}
					args = append(args, a)
				}
				return cmdtest.Rpctl(t, args...)
			}
			ext := ".txt"
			if flag == "--plot" {
				ext = ".svg"
			}
			existing := filepath.Join(dir, "mine"+ext)
			os.WriteFile(existing, []byte("precious"), 0o644)

			_, errOut, code := run(existing)
			if code != 2 || !strings.Contains(errOut, existing) || !strings.Contains(errOut, "--force") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("existing file: exit %d, stderr %q; want 2 naming %s and --force", code, errOut, existing)
			}
			if b, _ := os.ReadFile(existing); string(b) != "precious" {
				t.Errorf("existing file changed without --force: %q", b)
			}

			if _, errOut, code := run(existing, "--force"); code != 0 {
				t.Errorf("--force: exit %d: %s", code, errOut)
			}
			b, _ := os.ReadFile(existing)
			switch {
			case flag == "--log-file" && (!strings.HasPrefix(string(b), "precious") || len(b) == len("precious")):
				t.Errorf("--force --log-file should append: %q", b)
			case flag != "--log-file" && bytes.Contains(b, []byte("precious")):
				t.Errorf("--force did not replace the file: %q", b)
			}

			// A FIFO (a device would do the same): never replaced nor
			// written, --force or not.
			fifo := filepath.Join(dir, "fifo"+ext)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, extra := range [][]string{nil, {"--force"}} {
				_, errOut, code := run(fifo, extra...)
				if st, err := os.Lstat(fifo); code != 2 || !strings.Contains(errOut, fifo) || !strings.Contains(errOut, "not a regular file") || err != nil || st.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("a FIFO %v: exit %d, stderr %q; want 2 naming it, and the FIFO kept", extra, code, errOut)
				}
			}

			// Issue 37 row 14: a directory, a missing directory and a file
			// where the directory should be are refused with exit 2 naming
			// the path given, never rpctl's temporary name.
			sub := filepath.Join(dir, "subdir"+ext)
			os.Mkdir(sub, 0o755)
			for _, c := range []struct{ path, want string }{
				{sub, "not a regular file but a directory"},
				{filepath.Join(dir, "no", "such", "dir", "file"+ext), "the directory " + filepath.Join(dir, "no", "such", "dir") + " does not exist"},
				{filepath.Join(existing, "file"+ext), existing + " is not a directory"},
			} {
				_, errOut, code := run(c.path)
				if code != 2 || !strings.Contains(errOut, flag+" "+c.path+": ") || !strings.Contains(errOut, c.want) || strings.Contains(errOut, ".tmp") || strings.Count(errOut, "\n") != 1 {
					t.Errorf("%s: exit %d, stderr %q; want 2 naming it and %q", c.path, code, errOut, c.want)
				}
			}

			link := filepath.Join(dir, "link.db")
			os.Symlink(db, link)
			for _, name := range []string{db, filepath.Join(filepath.Dir(db), ".", filepath.Base(db)), link} {
				_, errOut, code := run(name, "--force")
				if code != 2 || !strings.Contains(errOut, name) {
					t.Errorf("the database as %s: exit %d, stderr %q; want 2 naming it", name, code, errOut)
				}
			}
			if b, _ := os.ReadFile(db); !bytes.Equal(b, dbBytes) {
				t.Fatalf("the database changed")
			}

			fresh := filepath.Join(dir, "new"+ext)
			if _, errOut, code := run(fresh); code != 0 {
				t.Errorf("new file: exit %d: %s", code, errOut)
			}
			if st, err := os.Stat(fresh); err != nil || st.Size() == 0 {
				t.Errorf("new file not written: %v", err)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.Contains(e.Name(), ".tmp") {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
		})
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "status", "--check", "rpctl"); code > 1 {
		t.Errorf("status after the test: exit %d: %s", code, errOut)
	}
}

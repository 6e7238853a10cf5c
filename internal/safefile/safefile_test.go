package safefile

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cloud.db")
	os.WriteFile(db, []byte("database"), 0o644)
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("keep me"), 0o644)
	if err := os.Symlink(db, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(db, filepath.Join(dir, "hard.db")); err != nil {
		t.Fatal(err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	cases := []struct {
		name  string
		path  string
		force bool
		want  error // nil: written
	}{
		{"new file", filepath.Join(dir, "snap.db"), false, nil},
		{"existing file", other, false, ErrExists},
		{"existing file forced", other, true, nil},
		{"database", db, false, ErrProtected},
		{"database forced", db, true, ErrProtected},
		{"database by another path", filepath.Join(dir, "sub", "..", "cloud.db"), true, ErrProtected},
		{"database by a symbolic link", filepath.Join(dir, "link.db"), true, ErrProtected},
		{"database by a hard link", filepath.Join(dir, "hard.db"), true, ErrProtected},
		{"database's WAL", db + "-wal", true, ErrProtected},
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.path)
			p := Policy{Force: tc.force, Protected: []string{db}}
			err := p.WriteStream("--out", tc.path, write)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			got, _ := os.ReadFile(tc.path)
			if tc.want != nil {
				if string(got) != string(before) {
					t.Errorf("%s changed: %q", tc.path, got)
				}
				if !strings.Contains(err.Error(), tc.path) || !strings.HasPrefix(err.Error(), "--out ") {
					t.Errorf("message %q does not name the flag and the file", err)
				}
			} else if string(got) != "new" {
				t.Errorf("%s = %q, want new", tc.path, got)
			}
			if d, _ := os.ReadFile(db); string(d) != "database" {
				t.Errorf("database changed: %q", d)
			}
		})
	}
	assertNoTemp(t, dir)
}

// A failed fill leaves the target as it was and no temporary file behind.
func TestWriteFailedFill(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "chart.svg")
	os.WriteFile(out, []byte("old"), 0o644)
	var ext string
	err := Policy{Force: true}.Write("--plot", out, func(tmp string) error {
		ext = filepath.Ext(tmp)
		os.WriteFile(tmp, []byte("half"), 0o644)
		return errors.New("boom")
	})
	if err == nil || err.Error() != "boom" {
		t.Fatalf("err = %v", err)
	}
	if ext != ".svg" {
		t.Errorf("temporary file's extension %q, want .svg (writers choose the format by it)", ext)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("target = %q", b)
	}
	assertNoTemp(t, dir)
}

// A file created while the command worked is not replaced without Force.
func TestWriteRaceWithoutForce(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "snap.db")
	err := Policy{}.Write("--out", out, func(tmp string) error {
		return os.WriteFile(out, []byte("someone else's"), 0o644)
	})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "someone else's" {
		t.Errorf("target = %q", b)
	}
	assertNoTemp(t, dir)
}

func TestOpenLog(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cloud.db")
	os.WriteFile(db, []byte("database"), 0o644)
	log := filepath.Join(dir, "run.log")
	f, err := Policy{}.OpenLog("--log-file", log)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "one\n")
	f.Close()
	if _, err := (Policy{}).OpenLog("--log-file", log); !errors.Is(err, ErrExists) {
		t.Fatalf("existing log without force: %v", err)
	}
	f, err = Policy{Force: true}.OpenLog("--log-file", log)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "two\n")
	f.Close()
	if b, _ := os.ReadFile(log); string(b) != "one\ntwo\n" {
		t.Errorf("forced log appends: %q", b)
	}
	if _, err := (Policy{Force: true, Protected: []string{db}}).OpenLog("--log-file", db); !errors.Is(err, ErrProtected) {
		t.Fatalf("database as log: %v", err)
	}
	if b, _ := os.ReadFile(db); string(b) != "database" {
		t.Errorf("database changed: %q", b)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestNonRegularRefused: a device, a FIFO or a socket named as an output
// path is refused, --force or not, for a replaced file and for a log, and
// stays what it was.
func TestNonRegularRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	paths := map[string]string{"FIFO": fifo, "socket": sock}
	if os.Geteuid() == 0 {
		// A private twin of /dev/null (character device 1,3): writing it
		// by mistake would harm nothing.
		dev := filepath.Join(dir, "null")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatal(err)
		}
		paths["character device"] = dev
	}
	if err := os.Symlink(fifo, filepath.Join(dir, "link-to-fifo")); err != nil {
		t.Fatal(err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	for kind, path := range paths {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s force=%v", kind, force), func(t *testing.T) {
				before, _ := os.Lstat(path)
				err := Policy{Force: force}.WriteStream("--out", path, write)
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), kind) || !strings.HasPrefix(err.Error(), "--out "+path) {
					t.Errorf("--out: err = %v, want %v naming the flag, the path and %s", err, ErrNotRegular, kind)
				}
				if _, err := (Policy{Force: force}).OpenLog("--log-file", path); !errors.Is(err, ErrNotRegular) {
					t.Errorf("--log-file: err = %v, want %v", err, ErrNotRegular)
				}
				if after, err := os.Lstat(path); err != nil || after.Mode() != before.Mode() {
					t.Errorf("%s changed: %v, %v", path, after.Mode(), err)
				}
			})
		}
	}
	if _, err := (Policy{Force: true}).OpenLog("--log-file", filepath.Join(dir, "link-to-fifo")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("--log-file through a link to a FIFO: err = %v, want %v", err, ErrNotRegular)
	}
	assertNoTemp(t, dir)
}

// TestNoPlaceRefused (issue 37 row 14): a directory is no regular file; a
// path whose directory is missing, is a file, or refuses a new file is
// ErrNoPlace; every message names the path given, never the temporary one.
func TestNoPlaceRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	cases := []struct {
		path string
		want error
		why  string
	}{
		{dir, ErrNotRegular, "but a directory"},
		{filepath.Join(dir, "no", "such", "out"), ErrNoPlace, "the directory " + filepath.Join(dir, "no", "such") + " does not exist"},
		{filepath.Join(file, "out"), ErrNoPlace, file + " is not a directory"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		cases = append(cases, struct {
			path string
			want error
			why  string
		}{filepath.Join(ro, "out"), ErrNoPlace, "in " + ro})
	}
	for _, c := range cases {
		for _, force := range []bool{false, true} {
			err := Policy{Force: force}.WriteStream("--out", c.path, write)
			if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "--out "+c.path+": ") || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), ".tmp") {
				t.Errorf("%s force=%v: err = %v, want %v with %q", c.path, force, err, c.want, c.why)
			}
			if _, err := (Policy{Force: force}).OpenLog("--log-file", c.path); !errors.Is(err, c.want) && !(c.path == filepath.Join(ro, "out")) {
				t.Errorf("--log-file %s: err = %v, want %v", c.path, err, c.want)
			}
		}
	}
}

// TestWriteMode (issue 39): a policy's Mode is the file's permission less
// the umask, as a file os.Create makes beside it gets; without it the file
// stays private.
func TestWriteMode(t *testing.T) {
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe")
	f, err := os.Create(probe)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := os.Stat(probe)
	if err != nil {
		t.Fatal(err)
	}
	asCreate := st.Mode().Perm()
	for _, tc := range []struct {
		mode os.FileMode
		want os.FileMode
	}{{0, 0o600}, {0o666, asCreate}, {0o640, 0o640 & asCreate}} {
		path := filepath.Join(dir, fmt.Sprintf("chart-%o.svg", tc.mode))
		if err := (Policy{Mode: tc.mode}).WriteStream("--plot", path, func(w io.Writer) error {
			_, err := io.WriteString(w, "<svg/>")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != tc.want {
			t.Errorf("Mode %o: the file is %o, want %o", tc.mode, st.Mode().Perm(), tc.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

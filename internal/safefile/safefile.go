// Package safefile writes the files an operator names on the command line
// (--out, --plot, --log-file) without ever destroying one by surprise: an
// existing file is refused unless the operator forces it, a path that is one
// of the databases rpctl has open is refused always, and a file appears whole
// or not at all (it is built under a temporary name beside its target and
// renamed).
package safefile

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// ErrExists marks an output path that names an existing file when the
// operator did not force it.
var ErrExists = errors.New("exists")

// ErrNotRegular marks an output path that names a device, a FIFO or a
// socket: rpctl writes only regular files, and replacing (or appending to)
// such a path is never what the operator meant, forced or not.
var ErrNotRegular = errors.New("is not a regular file")

// ErrNoPlace marks an output path whose directory does not exist, is no
// directory, or refuses a new file: nothing can be written there, and the
// message names the path the operator gave, not the temporary file.
var ErrNoPlace = errors.New("cannot be created")

// ErrProtected marks an output path that is one of the files rpctl reads
// (a database, a config file): never written, forced or not.
var ErrProtected = errors.New("is a file rpctl reads")

// Policy says which paths a command may write.
type Policy struct {
	// Force allows replacing an existing file.
	Force bool
	// Protected are the files the run reads (databases and their SQLite
	// journals, config files): an output path naming one, by any path or
	// link, is refused even with Force.
	Protected []string
	// Mode, when set, is the permission the file is created with, less
	// the umask, as os.Create gives (0o666: a chart anyone may read);
	// unset, the file is private (0o600, os.CreateTemp's).
	Mode os.FileMode
}

// Check refuses path when writing it would destroy something: flag names
// the option (--out) for the message. It is called before a command does
// its work, so that a long run does not end in a refusal, and again when
// the file is committed.
func (p Policy) Check(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := p.checkProtected(flag, path); err != nil {
		return err
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return checkDir(flag, path)
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, path, err)
	case !st.Mode().IsRegular() && st.Mode()&os.ModeSymlink == 0:
		return notRegular(flag, path, st.Mode())
	case !p.Force:
		return fmt.Errorf("%s %s: the file %w; pass --force to replace it", flag, path, ErrExists)
	}
	return nil
}

// checkDir refuses a new file's path whose directory does not exist or is
// no directory (--out no/such/dir/file), naming the directory.
func checkDir(flag, path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %s: the file %w: the directory %s does not exist", flag, path, ErrNoPlace, dir)
	case err != nil:
		return fmt.Errorf("%s %s: the file %w: %s: %v", flag, path, ErrNoPlace, dir, pathErr(err))
	case !st.IsDir():
		return fmt.Errorf("%s %s: the file %w: %s is not a directory", flag, path, ErrNoPlace, dir)
	}
	return nil
}

// pathErr is the reason of a *os.PathError without its path (which may be
// a temporary name the operator never gave).
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (p Policy) checkProtected(flag, path string) error {
	target := canonical(path)
	tst, terr := os.Stat(path)
	for _, prot := range p.Protected {
		if prot == "" {
			continue
		}
		for _, name := range []string{prot, prot + "-wal", prot + "-shm", prot + "-journal"} {
			same := canonical(name) == target
			if !same && terr == nil {
				if st, err := os.Stat(name); err == nil && os.SameFile(st, tst) {
					same = true
				}
			}
			if same {
				return fmt.Errorf("%s %s: refusing to write it: the file %w (%s)", flag, path, ErrProtected, prot)
			}
		}
	}
	return nil
}

// canonical is path made absolute with its directory's links resolved, so
// that dir/../cloud.db and a link to dir name the same file even before the
// file exists.
func canonical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	full := filepath.Join(dir, base)
	if r, err := filepath.EvalSymlinks(full); err == nil {
		return r
	}
	return full
}

// Write builds the file at path through fill, which writes a temporary file
// beside it (same directory, same extension, so that writers choosing a
// format by extension still do); the result is renamed to path only when
// fill succeeded and the policy still allows it. Without Force the rename
// cannot replace a file created meanwhile (it is a link, which fails on an
// existing name).
func (p Policy) Write(flag, path string, fill func(tmpPath string) error) error {
	if err := p.Check(flag, path); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := createTemp(dir, "."+base+".", ".tmp"+filepath.Ext(base), p.Mode)
	if err != nil {
		// The temporary name is rpctl's, not the operator's: the message
		// names the path given and its directory.
		return fmt.Errorf("%s %s: the file %w in %s: %v", flag, path, ErrNoPlace, dir, pathErr(err))
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	if err := fill(tmpPath); err != nil {
		return err
	}
	if err := p.Check(flag, path); err != nil {
		return err
	}
	if p.Force {
		err = os.Rename(tmpPath, path)
	} else if err = os.Link(tmpPath, path); errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s %s: the file %w (created while rpctl worked); pass --force to replace it", flag, path, ErrExists)
	} else if err != nil {
		// Some file systems have no hard links: fall back to a rename
		// after the check above.
		err = os.Rename(tmpPath, path)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return nil
}

// createTemp is os.CreateTemp(dir, prefix+"*"+suffix), with mode (less the
// umask, which the kernel applies on create) instead of 0o600 when set.
func createTemp(dir, prefix, suffix string, mode os.FileMode) (*os.File, error) {
	if mode == 0 {
		return os.CreateTemp(dir, prefix+"*"+suffix)
	}
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"+suffix), Err: os.ErrExist}
}

// WriteStream is Write for content produced by one writer call.
func (p Policy) WriteStream(flag, path string, write func(w io.Writer) error) error {
	return p.Write(flag, path, func(tmpPath string) error {
		f, err := os.OpenFile(tmpPath, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("%s %s: %w", flag, path, err)
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s %s: %w", flag, path, err)
		}
		return nil
	})
}

// OpenLog opens a log file that is written as the run goes (a crash must
// leave the record readable, so there is no temporary name): a new file is
// created exclusively; an existing one is refused unless Force, which
// appends to it and so keeps the earlier records.
func (p Policy) OpenLog(flag, path string) (*os.File, error) {
	if path == "" {
		return nil, fmt.Errorf("%s: no file named", flag)
	}
	if err := p.checkProtected(flag, path); err != nil {
		return nil, err
	}
	// Followed through links: the log is opened, not renamed into place.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, notRegular(flag, path, st.Mode())
	} else if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		if err := checkDir(flag, path); err != nil {
			return nil, err
		}
	}
	mode := os.O_CREATE | os.O_WRONLY | os.O_EXCL
	if p.Force {
		mode = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, mode, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s %s: the file %w; pass --force to append to it", flag, path, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return f, nil
}

// notRegular is the refusal of a path that names no regular file.
func notRegular(flag, path string, m os.FileMode) error {
	kind := "a special file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&os.ModeCharDevice != 0:
		kind = "a character device"
	case m&os.ModeDevice != 0:
		kind = "a block device"
	case m&os.ModeNamedPipe != 0:
		kind = "a FIFO"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("%s %s: %w but %s; rpctl writes only regular files, --force or not", flag, path, ErrNotRegular, kind)
}

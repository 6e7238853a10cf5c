package cmdutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// ExecHelper replaces this process with the helper program name (rpctl
// with a heavy library linked in), same arguments: found beside this
// executable, else on PATH. what names the command for the error.
func ExecHelper(name, what string) error {
	path := ""
	self, selfErr := os.Executable()
	if selfErr == nil {
		if p := filepath.Join(filepath.Dir(self), name); isExecutable(p) {
			path = p
		}
	}
	if path == "" {
		p, err := exec.LookPath(name)
		if err != nil {
			return fmt.Errorf("%s runs %s, which is neither beside rpctl nor on PATH (make build puts it in bin/)", what, name)
		}
		path = p
	}
	if selfErr == nil && path == self {
		// A helper built without its hook would exec itself for ever.
		return fmt.Errorf("%s: %s is this program, built without what it should run", what, path)
	}
	err := syscall.Exec(path, append([]string{path}, os.Args[1:]...), os.Environ())
	return fmt.Errorf("run %s: %w", path, err)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Package readlimit reads the files an operator names on the command line
// (a flavor or image file, provider.yaml) with a bound on their size: a
// path that names /dev/zero, /dev/urandom or a file far larger than its
// kind ever is is refused after Max+1 bytes, not read until memory runs
// out. Pipes and process substitution (--flavor <(openstack flavor show
// -f json m1.large)) still work: the bound is on what is read, not on the
// kind of file.
package readlimit

import (
	"fmt"
	"io"
	"os"
)

// File reads path, at most max bytes: a longer file is an error naming the
// path, the bound and what kind of file it should be.
func File(path string, max int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: more than %s: not %s (refused rather than read without end)", path, Size(max), what)
	}
	return data, nil
}

// Size is n bytes as a message says it (1 MiB, 512 KiB, 100 bytes).
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

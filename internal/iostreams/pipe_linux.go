package iostreams

import (
	"os"

	"golang.org/x/sys/unix"
)

// GrowOutputPipe asks the kernel for a pipe buffer of n bytes (the most an
// unprivileged process may ask is /proc/sys/fs/pipe-max-size, 1 MiB by
// default) when standard output is a pipe, before a command writes a large
// answer into it. With the default 64 KiB the command waits for its reader
// after every 64 KiB, where a server writing the same answer into a socket
// does not (the kernel's socket buffer grows to megabytes): `rpctl
// candidates -f json` on placement-perfload, 490 KB, finished 0.15 to
// 0.34 ms sooner (paired medians of 151; issue 35). Best effort: a
// terminal, a file, or a refused size leave things as they were.
func (s *IOStreams) GrowOutputPipe(n int) {
	f, ok := s.Out.(*os.File)
	if !ok {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return
	}
	if cur, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0); err == nil && cur < n {
		unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, n)
	}
}

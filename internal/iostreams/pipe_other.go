//go:build !linux

package iostreams

// GrowOutputPipe does nothing here: only Linux lets a pipe's buffer grow.
func (s *IOStreams) GrowOutputPipe(n int) {}

package cmdutil

import (
	"bufio"
	"fmt"
	"strings"
)

// Confirm asks on the terminal; anything but y/yes declines.
func Confirm(f *Factory, question string) (bool, error) {
	fmt.Fprint(f.IO.ErrOut, question)
	line, err := bufio.NewReader(f.IO.In).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

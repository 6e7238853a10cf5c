package iostreams

import "testing"

func TestUseColor(t *testing.T) {
	for _, c := range []struct {
		tty  bool
		env  map[string]string
		want bool
	}{
		{true, nil, true},
		{true, map[string]string{"TERM": "xterm-256color"}, true},
		{false, nil, false},
		{true, map[string]string{"NO_COLOR": ""}, false},
		{true, map[string]string{"NO_COLOR": "1"}, false},
		{true, map[string]string{"TERM": "dumb"}, false},
	} {
		lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		if got := useColor(c.tty, lookup); got != c.want {
			t.Errorf("terminal %v, env %v: colour %v, want %v", c.tty, c.env, got, c.want)
		}
	}
}

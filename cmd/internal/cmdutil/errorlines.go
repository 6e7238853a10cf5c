package cmdutil

import (
	"errors"
	"strings"
)

// ErrorLines splits an error into the lines rpctl prints, one "rpctl: "
// line each: the errors an errors.Join holds (the per-flavor errors of
// capacity, say) each get their own line, with the text of any error
// that wraps the join (a prefix, a hint after it) on each; a newline inside one error stays in its line, for
// the caller to escape (a newline in a name read from a database must not
// start a line of its own). Joined errors used to reach the terminal as one
// line with a literal \x0a between them (issue 37 row 14).
func ErrorLines(err error) []string {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		subs := j.Unwrap()
		texts := make([]string, 0, len(subs))
		for _, s := range subs {
			if s != nil {
				texts = append(texts, s.Error())
			}
		}
		// Only a join whose text is its errors' texts, one a line (what
		// errors.Join gives; fmt.Errorf with several %w does not).
		if len(texts) > 1 && strings.Join(texts, "\n") == msg {
			var out []string
			for _, s := range subs {
				out = append(out, ErrorLines(s)...)
			}
			return out
		}
		return []string{msg}
	}
	if inner := errors.Unwrap(err); inner != nil {
		if in := inner.Error(); in != "" && strings.Count(msg, in) == 1 {
			lines := ErrorLines(inner)
			if len(lines) > 1 {
				at := strings.Index(msg, in)
				prefix, suffix := msg[:at], msg[at+len(in):]
				for i := range lines {
					lines[i] = prefix + lines[i] + suffix
				}
				return lines
			}
		}
	}
	return []string{msg}
}

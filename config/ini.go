// Package config reads the oslo.config INI files operators already have
// (nova.conf, placement.conf) and the options rpctl takes from them.
package config

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// INI is the parsed content of one or more oslo.config files. Later files and
// later lines win, as oslo.config does for single-valued options.
type INI struct {
	sections map[string]map[string]value
}

type value struct {
	v      string
	source string // "file:line", so errors can point at the line an operator must fix
}

// NewINI returns an empty INI.
func NewINI() *INI { return &INI{sections: map[string]map[string]value{}} }

// Parse reads one file into ini, overriding earlier values. name is used only
// in error messages.
//
// The accepted syntax is oslo.config's (iniparser.py): "[section]" headers,
// "key = value" or "key: value", "#" and ";" comment lines, and continuation
// lines that start with white space.
func (ini *INI) Parse(r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	section := ""
	lastKey := ""
	lineNo := 0
	for sc.Scan() {
		lineNo++
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			lastKey = ""
			continue
		case raw[0] == ' ' || raw[0] == '\t':
			if lastKey == "" {
				return fmt.Errorf("%s:%d: continuation line without a preceding option: %q", name, lineNo, line)
			}
			v := ini.sections[section][lastKey]
			v.v += "\n" + line
			ini.sections[section][lastKey] = v
			continue
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") || len(line) < 3 {
				return fmt.Errorf("%s:%d: malformed section header %q", name, lineNo, line)
			}
			section = strings.TrimSpace(line[1 : len(line)-1])
			if ini.sections[section] == nil {
				ini.sections[section] = map[string]value{}
			}
			lastKey = ""
			continue
		}
		if section == "" {
			return fmt.Errorf("%s:%d: option %q appears before any [section] header", name, lineNo, line)
		}
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			return fmt.Errorf("%s:%d: expected \"key = value\", got %q", name, lineNo, line)
		}
		key := strings.TrimSpace(line[:i])
		val := strings.TrimSpace(line[i+1:])
		val = unquote(val)
		ini.sections[section][key] = value{v: val, source: fmt.Sprintf("%s:%d", name, lineNo)}
		lastKey = key
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// unquote strips one pair of matching quotes, which oslo.config allows around
// values.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// Get returns the value of section/key with oslo.config's template
// substitution applied, its "file:line" and whether it is set. A reference
// that cannot be resolved (a cycle) leaves the value as written.
func (ini *INI) Get(section, key string) (val, source string, ok bool) {
	v, ok := ini.raw(section, key)
	if !ok {
		return "", "", false
	}
	out, err := ini.substitute(section, v.v, map[[2]string]bool{{section, key}: true})
	if err != nil {
		return v.v, v.source, true
	}
	return out, v.source, true
}

// Lookup is Get with the substitution error: a reference cycle names the
// option and the file line.
func (ini *INI) Lookup(section, key string) (val, source string, ok bool, err error) {
	v, ok := ini.raw(section, key)
	if !ok {
		return "", "", false, nil
	}
	out, err := ini.substitute(section, v.v, map[[2]string]bool{{section, key}: true})
	if err != nil {
		return "", v.source, true, fmt.Errorf("%s: [%s] %s: %w", v.source, section, key, err)
	}
	return out, v.source, true, nil
}

func (ini *INI) raw(section, key string) (value, bool) {
	s, ok := ini.sections[section]
	if !ok {
		return value{}, false
	}
	v, ok := s[key]
	return v, ok
}

// substitute expands $name, ${name} and ${group.name} as oslo.config's
// ConfigOpts._substitute does (string.Template.safe_substitute with
// idpattern [_a-z][._a-z0-9]*, case-insensitive): a name without a group is
// looked up in the option's own section, then in [DEFAULT]; a referenced
// option that is not set is the empty string (the default of an option
// without one); "$$" and "\$" are a literal "$"; anything else after "$"
// stays as written.
func (ini *INI) substitute(section, v string, seen map[[2]string]bool) (string, error) {
	if !strings.Contains(v, "$") {
		return v, nil
	}
	v = strings.ReplaceAll(v, `\$`, "$$")
	var b strings.Builder
	for i := 0; i < len(v); {
		c := v[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(v) && v[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		name, end := "", i+1
		if i+1 < len(v) && v[i+1] == '{' {
			if n := templateID(v[i+2:]); n > 0 && i+2+n < len(v) && v[i+2+n] == '}' {
				name, end = v[i+2:i+2+n], i+3+n
			}
		} else if n := templateID(v[i+1:]); n > 0 {
			name, end = v[i+1:i+1+n], i+1+n
		}
		if name == "" {
			b.WriteByte('$')
			i++
			continue
		}
		val, err := ini.resolve(section, name, seen)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		i = end
	}
	return b.String(), nil
}

// templateID is the length of the identifier at the start of s.
func templateID(s string) int {
	isAlpha := func(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	if s == "" || !isAlpha(s[0]) {
		return 0
	}
	n := 1
	for n < len(s) && (isAlpha(s[n]) || s[n] == '.' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	return n
}

func (ini *INI) resolve(section, name string, seen map[[2]string]bool) (string, error) {
	var candidates [][2]string
	if group, opt, ok := strings.Cut(name, "."); ok {
		candidates = append(candidates, [2]string{group, opt}, [2]string{"DEFAULT", name})
	} else {
		candidates = append(candidates, [2]string{section, name}, [2]string{"DEFAULT", name})
	}
	for _, k := range candidates {
		v, ok := ini.raw(k[0], k[1])
		if !ok {
			continue
		}
		if seen[k] {
			return "", fmt.Errorf("template substitution loop through [%s] %s", k[0], k[1])
		}
		seen[k] = true
		out, err := ini.substitute(k[0], v.v, seen)
		delete(seen, k)
		return out, err
	}
	return "", nil
}

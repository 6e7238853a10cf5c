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

// Get returns the value of section/key, its "file:line" and whether it is set.
func (ini *INI) Get(section, key string) (val, source string, ok bool) {
	s, ok := ini.sections[section]
	if !ok {
		return "", "", false
	}
	v, ok := s[key]
	return v.v, v.source, ok
}

// Package config reads the oslo.config INI files operators already have
// (nova.conf, placement.conf) and the options rpctl takes from them.
package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// INI is the parsed content of one or more oslo.config files. Later files and
// later lines win, as oslo.config does for single-valued options.
type INI struct {
	sections map[string]map[string]value
}

type value struct {
	v      string
	source string // "file:line", so errors can point at the line an operator must fix
	// all are every value given, in order, for multi-valued options
	// (oslo.config's MultiStrOpt gathers them from every line and file).
	all []string
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
	sc.Buffer(make([]byte, 64*1024), maxLine)
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
			v.all[len(v.all)-1] = v.v
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
		prev := ini.sections[section][key].all
		ini.sections[section][key] = value{v: val, source: fmt.Sprintf("%s:%d", name, lineNo), all: append(slices.Clip(prev), val)}
		lastKey = key
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: a line longer than %d MiB: not an oslo.config file", name, lineNo+1, maxLine>>20)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// maxLine is the longest line Parse reads.
const maxLine = 4 << 20

// unquote strips one pair of matching quotes, which oslo.config allows around
// values.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// Lookup returns the value of section/key with oslo.config's template
// substitution applied, its "file:line" and whether it is set. A value
// whose substitution fails (a reference cycle, a reference to an option set
// in no file read) is an error naming the file line, the section and
// option, and the reference; the value is never returned half-substituted.
func (ini *INI) Lookup(section, key string) (val, source string, ok bool, err error) {
	v, ok := ini.raw(section, key)
	if !ok {
		return "", "", false, nil
	}
	out, err := ini.substitute(section, v.v, &expansion{seen: map[[2]string]bool{{section, key}: true}})
	if err != nil {
		return "", v.source, true, fmt.Errorf("%s: %s: %w", v.source, optionName(section, key), err)
	}
	return out, v.source, true, nil
}

// LookupMulti is Lookup for a multi-valued option: every value given, in
// the order of the lines and files, each substituted; source is the last
// value's.
func (ini *INI) LookupMulti(section, key string) (vals []string, source string, ok bool, err error) {
	v, ok := ini.raw(section, key)
	if !ok {
		return nil, "", false, nil
	}
	for _, one := range v.all {
		out, err := ini.substitute(section, one, &expansion{seen: map[[2]string]bool{{section, key}: true}})
		if err != nil {
			return nil, v.source, true, fmt.Errorf("%s: %s: %w", v.source, optionName(section, key), err)
		}
		vals = append(vals, out)
	}
	return vals, v.source, true, nil
}

// optionName is "[section] key" as an error shows it: quoted when it holds
// a control character (a file may hold a carriage return), so that the
// message stays one line.
func optionName(section, key string) string {
	s := "[" + section + "] " + key
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
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
// looked up in the option's own section, then in [DEFAULT]; "$$" and "\$"
// are a literal "$"; anything else after "$" stays as written.
//
// A reference to an option set in no file read is an error. oslo.config
// raises NoSuchOptError (or NoSuchGroupError) for an option Nova does not
// register, and substitutes the default of one it registers but the files
// leave unset; rpctl knows neither the registrations nor the defaults (an
// unset $my_ip is the host's address to Nova), so it refuses rather than read
// the reference as empty. ${DEFAULT.name} is an error too: oslo.config has
// no group named DEFAULT to substitute from (NoSuchGroupError).
//
// One option's substitution is bounded (exp): every reference may name
// options that each name several more ($a1 = $a0$a0, $a2 = $a1$a1, …
// doubles at each level), so a few lines can ask for more bytes than any
// machine holds. Past MaxSubstitutionRefs references or MaxSubstitutionBytes
// of text the option is refused (Lookup names it).
func (ini *INI) substitute(section, v string, exp *expansion) (string, error) {
	if !strings.Contains(v, "$") {
		return v, exp.wrote(len(v))
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
		val, err := ini.resolve(section, name, exp)
		if err == errUnset {
			return "", fmt.Errorf("%s %w", v[i:end], err)
		}
		if err != nil {
			return "", err
		}
		if err := exp.wrote(len(val)); err != nil {
			return "", err
		}
		b.WriteString(val)
		i = end
	}
	return b.String(), nil
}

// The bounds of one option's substitution: far above any real nova.conf
// (a value names a handful of options, and oslo.config values are lines),
// far below what takes memory or time to notice.
const (
	MaxSubstitutionRefs  = 10000
	MaxSubstitutionBytes = 1 << 20
)

// expansion is one option's substitution under way: the options it is
// inside (a loop is an error) and what it has cost so far.
type expansion struct {
	seen  map[[2]string]bool
	refs  int
	bytes int
}

// errTooLarge is a substitution past its bounds.
var errTooLarge = fmt.Errorf("template substitution expands to more than %d references or %d MiB (nested $references multiply at each level): refused", MaxSubstitutionRefs, MaxSubstitutionBytes>>20)

func (e *expansion) wrote(n int) error {
	e.bytes += n
	if e.bytes > MaxSubstitutionBytes {
		return errTooLarge
	}
	return nil
}

func (e *expansion) ref() error {
	e.refs++
	if e.refs > MaxSubstitutionRefs {
		return errTooLarge
	}
	return nil
}

// templateID is the length in bytes of the identifier at the start of s:
// oslo.config's idpattern [_a-z][._a-z0-9]* matched case-insensitively by
// Python's re, for which [a-z] also holds İ, ı, ſ and the Kelvin sign K.
func templateID(s string) int {
	isAlpha := func(r rune) bool {
		return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' ||
			r == '\u0130' || r == '\u0131' || r == '\u017f' || r == '\u212a'
	}
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !isAlpha(r) && (n == 0 || r != '.' && (r < '0' || r > '9')) {
			break
		}
		n += size
	}
	return n
}

// errUnset is a reference to an option set in no file read.
var errUnset = errors.New("refers to an option set in no file read (Nova would fail on an option it does not register, or use the default of one it does, which rpctl does not know)")

func (ini *INI) resolve(section, name string, exp *expansion) (string, error) {
	if err := exp.ref(); err != nil {
		return "", err
	}
	seen := exp.seen
	var candidates [][2]string
	if group, opt, ok := strings.Cut(name, "."); ok {
		if group == "DEFAULT" {
			return "", fmt.Errorf("${%s}: oslo.config has no group [DEFAULT] to substitute from; write ${%s}", name, opt)
		}
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
			return "", fmt.Errorf("template substitution loop through %s", optionName(k[0], k[1]))
		}
		seen[k] = true
		out, err := ini.substitute(k[0], v.v, exp)
		delete(seen, k)
		if err == errTooLarge {
			return "", err
		}
		if err != nil {
			return "", fmt.Errorf("in %s (%s): %w", optionName(k[0], k[1]), v.source, err)
		}
		return out, nil
	}
	return "", errUnset
}

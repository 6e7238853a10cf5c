package config

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/fuzzcheck"
)

// FuzzParseINI: no file content panics or hangs the oslo.config parser or
// the options read from it; every error is one line; and what is accepted
// is read whole: writing every section, option and value back out and
// parsing that gives the same raw values and the same substituted values
// (or a substitution error on both), and a value whose substitution is
// accepted refers only to options that are set (oslo.config's own template
// pattern, applied here with a regular expression, finds the references).
func FuzzParseINI(f *testing.F) {
	for _, s := range []string{
		"[DEFAULT]\ncpu_allocation_ratio = 16.0\nram_allocation_ratio: 1.5\n",
		"[database]\nconnection = mysql+pymysql://nova:secret@db/nova\n# comment\n; other\n",
		"[DEFAULT]\nkey = first\n  continued\n\tagain\n[api_database]\nconnection = \"sqlite:///x.db\"\n",
		"[placement_database]\nconnection = 'mysql://p:p@h/placement'\n",
		"[DEFAULT]\nreserved_host_memory_mb = 512\ninitial_cpu_allocation_ratio = 4\n",
		"key = value\n", "[broken\n", "[DEFAULT]\n  stray\n",
		"[DEFAULT]\nmy_ip = 10.0.0.1\nhost = h-$my_ip\n[database]\nconnection = mysql://n:pa$$w@${my_ip}/nova\n",
		"[DEFAULT]\na = $b\nb = ${database.connection} \\$x\n[database]\nconnection = $a\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		ini := NewINI()
		var err error
		fuzzcheck.Within(t, func() { err = ini.Parse(strings.NewReader(data), "nova.conf") })
		if err != nil {
			fuzzcheck.OneLine(t, err)
			return
		}
		fuzzcheck.Within(t, func() { _, err = FromINI(ini) })
		if err != nil {
			fuzzcheck.OneLine(t, err)
		}
		again := NewINI()
		out := writeINI(ini)
		if err := again.Parse(strings.NewReader(out), "again.conf"); err != nil {
			t.Fatalf("accepted, but written back it is rejected: %v\n%s", err, out)
		}
		for sec, kv := range ini.sections {
			for k, v := range kv {
				if w, ok := again.raw(sec, k); !ok || w.v != v.v {
					t.Fatalf("[%s] %s = %q, written back %q", sec, k, v.v, w.v)
				}
				var got, back string
				var err, errBack error
				fuzzcheck.Within(t, func() {
					got, _, _, err = ini.Lookup(sec, k)
					back, _, _, errBack = again.Lookup(sec, k)
				})
				if (err == nil) != (errBack == nil) || got != back {
					t.Fatalf("[%s] %s reads %q (%v), written back %q (%v)", sec, k, got, err, back, errBack)
				}
				if err != nil {
					fuzzcheck.OneLine(t, err)
					continue
				}
				for _, ref := range references(v.v) {
					if !ini.isSet(sec, ref) {
						t.Fatalf("[%s] %s = %q reads %q, but its reference %q is to no option set", sec, k, v.v, got, ref)
					}
				}
			}
		}
	})
}

// templateRef is the pattern of Python's string.Template with
// oslo.config's idpattern (case-insensitive; Python's [a-z] then also
// holds İ, ı, ſ and K): "$$", $name, ${name}, or a "$" left as written.
var templateRef = regexp.MustCompile(`(?i)\$(?:(\$)|([_a-z\x{130}\x{131}\x{17f}\x{212a}][._a-z0-9\x{130}\x{131}\x{17f}\x{212a}]*)|\{([_a-z\x{130}\x{131}\x{17f}\x{212a}][._a-z0-9\x{130}\x{131}\x{17f}\x{212a}]*)\}|)`)

// references are the option names value refers to, "\$" read as "$$" as
// oslo.config does.
func references(value string) []string {
	var refs []string
	for _, m := range templateRef.FindAllStringSubmatch(strings.ReplaceAll(value, `\$`, "$$"), -1) {
		if m[2] != "" {
			refs = append(refs, m[2])
		} else if m[3] != "" {
			refs = append(refs, m[3])
		}
	}
	return refs
}

// isSet says whether a reference made from an option of section names an
// option set in the files: section's own or [DEFAULT]'s, or group.option.
func (ini *INI) isSet(section, ref string) bool {
	if _, ok := ini.raw("DEFAULT", ref); ok {
		return true
	}
	if group, opt, ok := strings.Cut(ref, "."); ok {
		_, set := ini.raw(group, opt)
		return set && group != "DEFAULT"
	}
	_, ok := ini.raw(section, ref)
	return ok
}

// writeINI writes ini out in the syntax Parse reads: the first line of a
// value quoted (Parse strips one pair of quotes), further lines indented.
func writeINI(ini *INI) string {
	var b strings.Builder
	secs := make([]string, 0, len(ini.sections))
	for s := range ini.sections {
		secs = append(secs, s)
	}
	slices.Sort(secs)
	for _, s := range secs {
		if len(ini.sections[s]) == 0 {
			continue
		}
		b.WriteString("[" + s + "]\n")
		keys := make([]string, 0, len(ini.sections[s]))
		for k := range ini.sections[s] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			lines := strings.Split(ini.sections[s][k].v, "\n")
			b.WriteString(k + " = \"" + lines[0] + "\"\n")
			for _, l := range lines[1:] {
				b.WriteString("\t" + l + "\n")
			}
		}
	}
	return b.String()
}

package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/fuzzcheck"
)

// FuzzParseINI: no file content panics or hangs the oslo.config parser or
// the options read from it; every error is one line; and what is accepted
// is read whole: writing every section, option and value back out and
// parsing that gives the same values.
func FuzzParseINI(f *testing.F) {
	for _, s := range []string{
		"[DEFAULT]\ncpu_allocation_ratio = 16.0\nram_allocation_ratio: 1.5\n",
		"[database]\nconnection = mysql+pymysql://nova:secret@db/nova\n# comment\n; other\n",
		"[DEFAULT]\nkey = first\n  continued\n\tagain\n[api_database]\nconnection = \"sqlite:///x.db\"\n",
		"[placement_database]\nconnection = 'mysql://p:p@h/placement'\n",
		"[DEFAULT]\nreserved_host_memory_mb = 512\ninitial_cpu_allocation_ratio = 4\n",
		"key = value\n", "[broken\n", "[DEFAULT]\n  stray\n",
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
		if _, err := FromINI(ini); err != nil {
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
			}
		}
	})
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

package pyjson

import "testing"

// Expected values are what Python 3.11's json.dumps(s) prints.
func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                       `""`,
		"VCPU":                   `"VCPU"`,
		`say "hi" \ bye`:         `"say \"hi\" \\ bye"`,
		"a\nb\rc\td\be\ff":       `"a\nb\rc\td\be\ff"`,
		"\x00\x1f\x7f":           `"\u0000\u001f\u007f"`,
		"caf\u00e9 — 日本":         `"caf\u00e9 \u2014 \u65e5\u672c"`,
		"emoji 😀":                `"emoji \ud83d\ude00"`,
		"bad \xff utf8":          `"bad \ufffd utf8"`,
		"</script> & <b>":        `"</script> & <b>"`,
		"~ is printable, DEL no": `"~ is printable, DEL no"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

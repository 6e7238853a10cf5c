package promtext

import (
	"bytes"
	"testing"
)

func TestWriteText(t *testing.T) {
	for _, tc := range []struct {
		name string
		fam  Family
		want string
	}{
		{"no labels", Family{Name: "a", Help: "h", Type: Gauge, Samples: []Sample{{Value: 3}}},
			"# HELP a h\n# TYPE a gauge\na 3\n"},
		{"escapes", Family{Name: "b", Help: "back\\slash\nline", Type: Gauge, Labels: []string{"l"},
			Samples: []Sample{{Values: []string{"q\"\\\n"}, Value: 0.5}}},
			"# HELP b back\\\\slash\\nline\n# TYPE b gauge\nb{l=\"q\\\"\\\\\\n\"} 0.5\n"},
		{"big whole numbers stay whole", Family{Name: "c", Help: "h", Type: Untyped, Samples: []Sample{{Value: 12345678901}}},
			"# HELP c h\n# TYPE c untyped\nc 12345678901\n"},
		{"a quote is escaped in label values only", Family{Name: "e", Help: `say "x"`, Type: Gauge, Labels: []string{"l", "m"},
			Samples: []Sample{{Values: []string{`a"b"`, "plain"}, Value: 1}}},
			"# HELP e say \"x\"\n# TYPE e gauge\ne{l=\"a\\\"b\\\"\",m=\"plain\"} 1\n"},
		{"empty family keeps its header", Family{Name: "d", Help: "h", Type: Gauge, Labels: []string{"x"}},
			"# HELP d h\n# TYPE d gauge\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, []*Family{&tc.fam}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tc.want)
			}
			if got := string(AppendText([]byte("x"), []*Family{&tc.fam})); got != "x"+tc.want {
				t.Errorf("AppendText: got\n%q\nwant\n%q", got, "x"+tc.want)
			}
		})
	}
}

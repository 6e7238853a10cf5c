package output

import (
	"bytes"
	"testing"
)

// TestWriteASCII covers what the prettytable comparisons do not reach:
// cells of several lines, rows shorter than the header, wide characters,
// per-column alignment and a table without rows.
func TestWriteASCII(t *testing.T) {
	left2 := []Align{AlignLeft, AlignLeft}
	tests := []struct {
		name              string
		headers           []string
		rows              [][]string
		headerAlign, data []Align
		want              string
	}{
		{"lines stacked", []string{"a", "b"}, [][]string{{"x\nyy", "z"}}, left2, left2,
			"+----+---+\n| a  | b |\n+----+---+\n| x  | z |\n| yy |   |\n+----+---+\n"},
		{"short row", []string{"a", "b"}, [][]string{{"x"}}, left2, left2,
			"+---+---+\n| a | b |\n+---+---+\n| x |   |\n+---+---+\n"},
		{"wide characters", []string{"host"}, [][]string{{"主机"}}, []Align{AlignLeft}, []Align{AlignRight},
			"+------+\n| host |\n+------+\n| 主机 |\n+------+\n"},
		{"per column", []string{"name", "n"}, [][]string{{"a", "10"}, {"bb", "7"}}, []Align{AlignCenter, AlignRight}, []Align{AlignLeft, AlignRight},
			"+------+----+\n| name |  n |\n+------+----+\n| a    | 10 |\n| bb   |  7 |\n+------+----+\n"},
		{"odd centre excess on the right", []string{"ab"}, [][]string{{"abcde"}}, []Align{AlignCenter}, []Align{AlignCenter},
			"+-------+\n|  ab   |\n+-------+\n| abcde |\n+-------+\n"},
		{"no rows", []string{"a"}, nil, []Align{AlignLeft}, []Align{AlignLeft},
			"+---+\n| a |\n+---+\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeASCII(&b, tt.headers, tt.rows, tt.headerAlign, tt.data); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

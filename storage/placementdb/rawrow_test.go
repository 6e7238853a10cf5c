package placementdb

import (
	"database/sql/driver"
	"math"
	"strconv"
	"testing"
)

// TestUnpack: a packed row's text lands in the columns at, each value
// read back as the column it was; a NULL (a value CONCAT_WS left out), a
// value too many, or no text fails the row.
func TestUnpack(t *testing.T) {
	at := []int{1, 2, 3, 4}
	for _, c := range []struct {
		name    string
		v       driver.Value
		ints    []int64 // columns 1-3
		ratio   float64 // column 4
		wantErr bool
	}{
		{"row", []byte("7,-2,9007199254740993,1.23457"), []int64{7, -2, 9007199254740993}, 1.23457, false},
		{"zeros", []byte("0,0,0,0"), []int64{0, 0, 0}, 0, false},
		{"a NULL left out", []byte("7,-2,1.5"), nil, 0, true},
		{"one value too many", []byte("1,2,3,4,5"), nil, 0, true},
		{"empty", []byte(""), nil, 0, true},
		{"NULL", nil, nil, 0, true},
		{"not text", int64(5), nil, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRawRow(6)
			r.unpack(c.v, at)
			var ints []int64
			var ratio float64
			if r.err == nil {
				ints = []int64{r.int(1), r.int(2), r.int(3)}
				ratio = r.float(4)
			}
			if (r.err != nil) != c.wantErr {
				t.Fatalf("error %v, want one: %v", r.err, c.wantErr)
			}
			if c.wantErr {
				return
			}
			for j := range ints {
				if ints[j] != c.ints[j] {
					t.Errorf("column %d: %d, want %d", j+1, ints[j], c.ints[j])
				}
			}
			if ratio != c.ratio {
				t.Errorf("ratio %v, want %v", ratio, c.ratio)
			}
			if r.text[0] != nil || r.text[5] != nil {
				t.Error("a column outside at was set")
			}
		})
	}
}

// TestParseInt: the same numbers and errors as strconv.ParseInt, around
// the 18 digits its loop takes and the int64 range strconv checks.
func TestParseInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-7", "123456789012345678", "-123456789012345678",
		"1234567890123456789", strconv.FormatInt(math.MaxInt64, 10), strconv.FormatInt(math.MinInt64, 10),
		"9223372036854775808", "-9223372036854775809", "", "-", "1a", "+1", "1.5", " 1"} {
		got, err := parseInt([]byte(s))
		want, werr := strconv.ParseInt(s, 10, 64)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("parseInt(%q) = %d, %v; strconv: %d, %v", s, got, err, want, werr)
		}
	}
}

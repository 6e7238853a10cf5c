package flagnum

import (
	"math"
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"1", 1, ""},
		{"50", 50, ""},
		{"9223372036854775807", math.MaxInt64, ""},
		{"18446744073709551616", 0, "must be at most 9223372036854775807"},
		{"1e3", 0, "not a whole number"},
		{" 5", 0, "not a whole number"},
		{"5 ", 0, "not a whole number"},
		{"+5", 0, "not a whole number"},
		{"0x10", 0, "not a whole number"},
		{"1_000", 0, "not a whole number"},
		{"", 0, "not a whole number"},
		{"-", 0, "not a whole number"},
		{"0", 0, "must be at least 1"},
		{"-1", 0, "must be at least 1"},
		{"-18446744073709551616", 0, "must be at least 1"},
	} {
		got, err := Count("max-count", tc.in, 1, math.MaxInt64)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) || got != tc.want {
			t.Errorf("Count(%q) = %d, %v; want %d, %q", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "--max-count ") {
			t.Errorf("Count(%q): %v does not name the flag", tc.in, err)
		}
	}
}

func TestRatio(t *testing.T) {
	const max = 3.40282e+38
	for _, tc := range []struct {
		in   string
		want float64
		err  string
	}{
		{"16", 16, ""},
		{"1.5", 1.5, ""},
		{".5", 0.5, ""},
		{"1.", 1, ""},
		{"1e3", 1000, ""},
		{"0", 0, ""},
		{"3.40282e+38", max, ""},
		{"1e39", 0, "greater than 3.40282e+38"},
		{"1e400", 0, "beyond any floating-point number"},
		{"nan", 0, "not a decimal number"},
		{"NaN", 0, "not a decimal number"},
		{"inf", 0, "not a decimal number"},
		{"-inf", 0, "not a decimal number"},
		{"0x1p4", 0, "not a decimal number"},
		{" 1.5", 0, "not a decimal number"},
		{"1_0", 0, "not a decimal number"},
		{"e3", 0, "not a decimal number"},
		{"1e", 0, "not a decimal number"},
		{"", 0, "not a decimal number"},
		{"-1", 0, "must not be negative"},
	} {
		got, err := Ratio("initial-cpu-allocation-ratio", tc.in, max)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) || got != tc.want {
			t.Errorf("Ratio(%q) = %g, %v; want %g, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// Package flagnum parses the counts and ratios of command-line flags, one
// way for every command: the text as typed (no spaces, no exponent in a
// count, no NaN or infinity), its range checked, and an error that names the
// flag and says which rule the value breaks. Commands give the error their
// documented exit code.
package flagnum

import (
	"fmt"
	"math"
	"strconv"
)

// Text is a flag value kept as typed, so that the command parses it with
// Count or Ratio and chooses the exit code: pflag's own integer flags
// refuse a bad value as a usage error before the command runs.
type Text string

func (t *Text) String() string     { return string(*t) }
func (t *Text) Set(s string) error { *t = Text(s); return nil }
func (t *Text) Type() string       { return "N" }

// Error is a flag value refused; Flag is the flag's name without dashes.
type Error struct {
	Flag, Value, Why string
}

func (e *Error) Error() string { return fmt.Sprintf("--%s %q: %s", e.Flag, e.Value, e.Why) }

// Count parses a whole number between lo and hi: ASCII digits only, with a
// leading minus only to say that it is negative.
func Count(flag, s string, lo, hi int64) (int64, error) {
	fail := func(format string, args ...any) (int64, error) {
		return 0, &Error{Flag: flag, Value: s, Why: fmt.Sprintf(format, args...)}
	}
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" {
		return fail("not a whole number")
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return fail("not a whole number (digits only: no spaces, sign, exponent or fraction)")
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil && s[0] == '-', err == nil && n < lo:
		return fail("must be at least %d", lo)
	case err != nil, n > hi:
		return fail("must be at most %d", hi)
	}
	return n, nil
}

// Ratio parses a decimal number from 0 to hi: digits with an optional
// fraction and exponent (1.5, 16, 1e3), not NaN, infinities, hexadecimal
// or spaces.
func Ratio(flag, s string, hi float64) (float64, error) {
	fail := func(format string, args ...any) (float64, error) {
		return 0, &Error{Flag: flag, Value: s, Why: fmt.Sprintf(format, args...)}
	}
	if !decimal(s) {
		return fail("not a decimal number (such as 1.5, 16 or 1e3)")
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsInf(f, 0):
		return fail("beyond any floating-point number")
	case f < 0:
		return fail("must not be negative")
	case f > hi:
		return fail("is greater than %g, the largest value Placement stores (a FLOAT column)", hi)
	}
	return f, nil
}

// decimal reports whether s is [-]digits[.digits][e[+-]digits] with at
// least one digit before the exponent.
func decimal(s string) bool {
	i, n := 0, len(s)
	if i < n && s[i] == '-' {
		i++
	}
	mant := 0
	for ; i < n && s[i] >= '0' && s[i] <= '9'; i++ {
		mant++
	}
	if i < n && s[i] == '.' {
		for i++; i < n && s[i] >= '0' && s[i] <= '9'; i++ {
			mant++
		}
	}
	if mant == 0 {
		return false
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < n && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == n
}

// InRange refuses an integer flag pflag already parsed when it is outside
// lo..hi, with Count's words.
func InRange(flag string, n, lo, hi int64) error {
	_, err := Count(flag, strconv.FormatInt(n, 10), lo, hi)
	return err
}

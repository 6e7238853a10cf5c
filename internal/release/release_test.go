package release

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Name
		wantErr bool
	}{
		{"", Zed, false},
		{"zed", Zed, false},
		{"ZED", Zed, false},
		{" Zed ", Zed, false},
		{"2025.1", R2025_1, false},
		{"epoxy", "", true},
		{"2024.1", "", true},
		{"yoga", "", true},
	} {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := Parse("2024.1"); err == nil || err.Error() != `rpctl knows the rules of zed, 2025.1, not "2024.1"` {
		t.Errorf("Parse(2024.1) error = %v", err)
	}
}

func TestNames(t *testing.T) {
	if got := Strings(); !slices.Equal(got, []string{"zed", "2025.1"}) {
		t.Errorf("Strings() = %v", got)
	}
	if !slices.Contains(Names(), Default) {
		t.Errorf("Default %q not in Names()", Default)
	}
	n := Names()
	n[0] = "x"
	if Names()[0] != Zed {
		t.Error("Names() returns the package's own slice")
	}
}

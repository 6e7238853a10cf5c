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
		{"2023.1", R2023_1, false},
		{"2023.2", R2023_2, false},
		{"2024.1", R2024_1, false},
		{"2024.2", R2024_2, false},
		{"epoxy", "", true},
		{"2025.2", "", true},
		{"yoga", "", true},
	} {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := Parse("2025.2"); err == nil || err.Error() != `rpctl knows the rules of zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1, not "2025.2"` {
		t.Errorf("Parse(2025.2) error = %v", err)
	}
}

func TestNames(t *testing.T) {
	if got := Strings(); !slices.Equal(got, []string{"zed", "2023.1", "2023.2", "2024.1", "2024.2", "2025.1"}) {
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

// TestSeriesAndProven: every release has its series name (the keys of
// Nova's SERVICE_VERSION_ALIASES) and only Zed and 2025.1 are proven by
// running their code.
func TestSeriesAndProven(t *testing.T) {
	want := map[Name]string{Zed: "Zed", R2023_1: "Antelope", R2023_2: "Bobcat", R2024_1: "Caracal", R2024_2: "Dalmatian", R2025_1: "Epoxy"}
	for _, n := range Names() {
		if n.Series() != want[n] {
			t.Errorf("%s.Series() = %q, want %q", n, n.Series(), want[n])
		}
		if IsProven(n) != (n == Zed || n == R2025_1) {
			t.Errorf("IsProven(%s) = %v", n, IsProven(n))
		}
	}
	if Name("2025.2").Series() != "" || IsProven("2025.2") {
		t.Error("an unknown release has a series or is proven")
	}
}

func TestSummary(t *testing.T) {
	want := "zed, 2025.1 (proven against their own Nova and Placement); 2023.1, 2023.2, 2024.1, 2024.2 (rules read from their source)"
	if got := Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

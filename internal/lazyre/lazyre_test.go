package lazyre

import (
	"sync"
	"testing"
)

func TestGet(t *testing.T) {
	tests := []struct {
		expr, in string
		want     bool
	}{
		{`^[A-Z0-9_]+$`, "VCPU", true},
		{`^[A-Z0-9_]+$`, "vcpu", false},
		{`(?i)^create table`, "CREATE TABLE x", true},
	}
	for _, tt := range tests {
		r := &Regexp{Expr: tt.expr}
		if got := r.Get().MatchString(tt.in); got != tt.want {
			t.Errorf("%q on %q = %v, want %v", tt.expr, tt.in, got, tt.want)
		}
		first := r.Get()
		if again := r.Get(); again != first {
			t.Errorf("%q compiled more than once", tt.expr)
		}
	}
}

// Concurrent first uses see one compiled expression (run with -race).
func TestGetConcurrent(t *testing.T) {
	r := &Regexp{Expr: `^a+$`}
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = r.Get() }()
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("two goroutines saw different compiled expressions")
		}
	}
}

func TestBadExprPanicsOnUse(t *testing.T) {
	r := &Regexp{Expr: `(`}
	defer func() {
		if recover() == nil {
			t.Error("a bad expression did not panic on first use")
		}
	}()
	r.Get()
}

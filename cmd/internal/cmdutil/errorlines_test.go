package cmdutil

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestErrorLines: joined errors are one line each, under the wrapping
// prefix; any other newline stays inside its line.
func TestErrorLines(t *testing.T) {
	a, b := errors.New("flavor a: too many groups"), errors.New("flavor b: no such trait")
	for _, c := range []struct {
		name string
		err  error
		want []string
	}{
		{"plain", errors.New("one"), []string{"one"}},
		{"a newline in one error stays", errors.New("host red\nnext"), []string{"host red\nnext"}},
		{"a join", errors.Join(a, b), []string{"flavor a: too many groups", "flavor b: no such trait"}},
		{"a join with a nil", errors.Join(a, nil, b), []string{"flavor a: too many groups", "flavor b: no such trait"}},
		{"a wrapped join", fmt.Errorf("capacity: %w", errors.Join(a, b)), []string{"capacity: flavor a: too many groups", "capacity: flavor b: no such trait"}},
		{"an exit error around it", &ExitError{Code: 5, Err: fmt.Errorf("capacity: %w", errors.Join(a, b))}, []string{"capacity: flavor a: too many groups", "capacity: flavor b: no such trait"}},
		{"a join of one", errors.Join(a), []string{"flavor a: too many groups"}},
		{"two %w are one line", fmt.Errorf("%w and %w", a, b), []string{"flavor a: too many groups and flavor b: no such trait"}},
		{"a hint after the join", fmt.Errorf("%w: narrow the request", errors.Join(a, b)), []string{"flavor a: too many groups: narrow the request", "flavor b: no such trait: narrow the request"}},
		{"a wrapper around it", fmt.Errorf("failed (%w)", errors.Join(a, b)), []string{"failed (flavor a: too many groups)", "failed (flavor b: no such trait)"}},
	} {
		if got := ErrorLines(c.err); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

package placementclient_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

// TestErrorForbiddenKind: a 401 or 403 answer, however wrapped, is the one
// kind (inventory.ErrForbidden) that every command maps to its refused-input
// code; no other status is.
func TestErrorForbiddenKind(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   bool
	}{
		{401, true}, {403, true}, {400, false}, {404, false}, {409, false}, {500, false},
	} {
		e := &placementclient.Error{Status: tc.status, Method: "GET", Path: "/allocations/x"}
		wrapped := fmt.Errorf("cell1: %w", e)
		if errors.Is(e, inventory.ErrForbidden) != tc.want || errors.Is(wrapped, inventory.ErrForbidden) != tc.want {
			t.Errorf("%d: errors.Is(_, inventory.ErrForbidden) = %v, want %v", tc.status, !tc.want, tc.want)
		}
		if errors.Is(e, inventory.ErrNotFound) {
			t.Errorf("%d is inventory.ErrNotFound too", tc.status)
		}
	}
}

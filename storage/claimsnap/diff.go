package claimsnap

import (
	"context"
	"fmt"
	"os"

	"github.com/rpctl/rpctl/claims"
)

// Read opens an existing claim file (upgrading it in place when it is older
// than Current) and returns its claims.
func Read(ctx context.Context, path string) ([]claims.Claim, int, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, 0, fmt.Errorf("claim file %s: %w", path, err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	c, err := s.Claims(ctx)
	return c, s.From, err
}

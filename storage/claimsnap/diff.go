package claimsnap

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rpctl/rpctl/claims"
)

// Read reads the claim file at path without writing to it: SQLite opens
// it read-only and immutable (no journal, no lock file, no change of
// journal mode), and a file of an older layout is read in its own layout
// rather than upgraded. An empty file, a database without the claim tables
// or anything else is refused. It returns the claims and the file's layout.
func Read(ctx context.Context, path string) ([]claims.Claim, int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("claim file %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil, 0, fmt.Errorf("claim file %s: the file is empty, not a claim file", path)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Clean(path)+"?mode=ro&immutable=1&_time_format=sqlite")
	if err != nil {
		return nil, 0, fmt.Errorf("claim file %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path}
	v, err := s.Version(ctx)
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("claim file %s: %w", path, err)
	case v == 0:
		return nil, 0, fmt.Errorf("claim file %s: not a claim file: a SQLite database without the claims and claims_version tables", path)
	case v > Current:
		return nil, 0, fmt.Errorf("claim file %s: %w: it is version %d, this rpctl reads versions 1 to %d; use a newer rpctl", path, ErrTooNew, v, Current)
	}
	c, err := s.readClaims(ctx, v)
	return c, v, err
}

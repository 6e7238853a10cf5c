package placementdb

import (
	"context"
	"errors"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

var _ migrate.Settler = (*Store)(nil)

// Settle implements migrate.Settler: it waits until the server sessions of
// the failed writes (storage.SessionError) have ended.
func (s *Store) Settle(ctx context.Context, failures []error) error {
	var sessions []int64
	for _, err := range failures {
		var se *storage.SessionError
		if errors.As(err, &se) {
			sessions = append(sessions, se.Session)
		}
	}
	return storage.WaitSessionsGone(ctx, s.db, sessions)
}

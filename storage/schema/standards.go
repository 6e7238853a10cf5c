package schema

import (
	"context"
	"strings"
	"time"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// SyncStandards inserts the standard resource classes and traits of
// release rel that are missing, the way that release's placement-api does
// on its first request (placement/objects/trait.py _trait_sync, which adds
// and never removes): classes keep their os-resource-classes index as id,
// traits take auto-increment ids.
func SyncStandards(ctx context.Context, db *storage.DB, rel release.Name) error {
	now := time.Now().UTC().Truncate(time.Second)
	// Read before taking a connection of our own: SQLite has only one.
	haveRC, err := sqlutil.NameIDs(ctx, db, "resource_classes", "name")
	if err != nil {
		return err
	}
	haveT, err := sqlutil.NameIDs(ctx, db, "traits", "name")
	if err != nil {
		return err
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		return db.Errorf("%w", storage.CleanError(err))
	}
	defer conn.Close()
	if db.IsMySQL() {
		// VCPU's id is 0, which MySQL otherwise reads as "next auto-increment".
		var mode string
		if err := conn.GetContext(ctx, &mode, `SELECT @@SESSION.sql_mode`); err != nil {
			return db.Errorf("%w", storage.CleanError(err))
		}
		if _, err := conn.ExecContext(ctx, `SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'`); err != nil {
			return db.Errorf("%w", storage.CleanError(err))
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SET SESSION sql_mode = ?`, mode)
	}
	for id, name := range standards.ResourceClasses() {
		if _, ok := haveRC[name]; ok {
			continue
		}
		if _, err := conn.ExecContext(ctx, db.Rebind(`INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, ?)`), id, name, now); err != nil {
			return db.Errorf("insert resource class %s: %w", name, storage.CleanError(err))
		}
	}

	var missingT []string
	for _, t := range standards.TraitsOf(rel) {
		if _, ok := haveT[t]; !ok {
			missingT = append(missingT, t)
		}
	}
	for len(missingT) > 0 {
		n := min(len(missingT), 200)
		q := `INSERT INTO traits (name, created_at) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?),", n), ",")
		args := make([]any, 0, 2*n)
		for _, t := range missingT[:n] {
			args = append(args, t, now)
		}
		if _, err := conn.ExecContext(ctx, db.Rebind(q), args...); err != nil {
			return db.Errorf("insert standard traits: %w", storage.CleanError(err))
		}
		missingT = missingT[n:]
	}
	return nil
}

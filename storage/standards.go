package storage

import (
	"context"
	"strings"
	"time"

	"github.com/rpctl/rpctl/standards"
)

// CustomResourceClassMinID is where Placement starts numbering custom
// resource classes (MIN_CUSTOM_RESOURCE_CLASS_ID), keeping them clear of the
// standard classes whose id is their index.
const CustomResourceClassMinID = standards.FirstCustomResourceClassID

// StandardResourceClasses returns os-resource-classes' list; a class's
// Placement id is its index.
func StandardResourceClasses() []string { return standards.ResourceClasses() }

// StandardTraits returns os-traits' list, sorted.
func StandardTraits() []string { return standards.Traits() }

// SyncStandards inserts the standard resource classes and traits that are
// missing, the way placement-api does on its first request: classes keep
// their os-resource-classes index as id, traits take auto-increment ids.
func SyncStandards(ctx context.Context, db *DB) error {
	now := time.Now().UTC().Truncate(time.Second)
	conn, err := db.Connx(ctx)
	if err != nil {
		return db.Errorf("%w", CleanError(err))
	}
	defer conn.Close()

	have := map[string]bool{}
	rows, err := conn.QueryxContext(ctx, `SELECT name FROM resource_classes`)
	if err != nil {
		return db.Errorf("read resource_classes: %w", CleanError(err))
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return db.Errorf("read resource_classes: %w", CleanError(err))
		}
		have[n] = true
	}
	rows.Close()
	if db.IsMySQL() {
		// VCPU's id is 0, which MySQL otherwise reads as "next auto-increment".
		var mode string
		if err := conn.GetContext(ctx, &mode, `SELECT @@SESSION.sql_mode`); err != nil {
			return db.Errorf("%w", CleanError(err))
		}
		if _, err := conn.ExecContext(ctx, `SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'`); err != nil {
			return db.Errorf("%w", CleanError(err))
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SET SESSION sql_mode = ?`, mode)
	}
	for id, name := range StandardResourceClasses() {
		if have[name] {
			continue
		}
		if _, err := conn.ExecContext(ctx, db.Rebind(`INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, ?)`), id, name, now); err != nil {
			return db.Errorf("insert resource class %s: %w", name, CleanError(err))
		}
	}

	haveT := map[string]bool{}
	rows, err = conn.QueryxContext(ctx, `SELECT name FROM traits`)
	if err != nil {
		return db.Errorf("read traits: %w", CleanError(err))
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return db.Errorf("read traits: %w", CleanError(err))
		}
		haveT[n] = true
	}
	rows.Close()
	var missingT []string
	for _, t := range StandardTraits() {
		if !haveT[t] {
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
			return db.Errorf("insert standard traits: %w", CleanError(err))
		}
		missingT = missingT[n:]
	}
	return nil
}

package storage

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
)

// Release removes every allocation of consumer and its consumer record in
// one transaction, as DELETE /allocations/{consumer} does (no generation
// changes). It returns false when the consumer held nothing.
func (l ClaimsLedger) Release(ctx context.Context, consumer string) (bool, error) {
	p := l.DB
	released := false
	err := p.Tx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, p.Rebind(`DELETE FROM allocations WHERE consumer_id = ?`), consumer)
		if err != nil {
			return p.Errorf("delete allocations of consumer %s: %w", consumer, CleanError(err))
		}
		n, _ := res.RowsAffected()
		released = n > 0
		if !released {
			return nil
		}
		if _, err := tx.ExecContext(ctx, p.Rebind(`DELETE FROM consumers WHERE uuid = ?`), consumer); err != nil {
			return p.Errorf("delete consumer %s: %w", consumer, CleanError(err))
		}
		return nil
	})
	return released, err
}

// FlavorByName reads a flavor of the API database by name or flavorid, with
// its extra specs; found is false when there is none.
func FlavorByName(ctx context.Context, api *DB, name string) (f claims.Flavor, found bool, err error) {
	var row struct {
		ID          int64  `db:"id"`
		Name        string `db:"name"`
		VCPUs       int64  `db:"vcpus"`
		MemoryMB    int64  `db:"memory_mb"`
		RootGB      int64  `db:"root_gb"`
		EphemeralGB int64  `db:"ephemeral_gb"`
		Swap        int64  `db:"swap"`
	}
	err = api.GetContext(ctx, &row, api.Rebind(`SELECT id, name, vcpus, memory_mb, COALESCE(root_gb, 0) AS root_gb,
		COALESCE(ephemeral_gb, 0) AS ephemeral_gb, swap FROM flavors WHERE name = ? OR flavorid = ? ORDER BY name = ? DESC, id LIMIT 1`), name, name, name)
	if errors.Is(err, sql.ErrNoRows) {
		return f, false, nil
	}
	if err != nil {
		return f, false, api.Errorf("read flavors: %w", CleanError(err))
	}
	f = claims.Flavor{Name: row.Name, VCPUs: row.VCPUs, MemoryMB: row.MemoryMB, RootGB: row.RootGB, EphemeralGB: row.EphemeralGB,
		Swap: row.Swap, ExtraSpecs: map[string]string{}}
	rows, err := api.QueryContext(ctx, api.Rebind("SELECT `key`, value FROM flavor_extra_specs WHERE flavor_id = ?"), row.ID)
	if err != nil {
		return f, false, api.Errorf("read flavor_extra_specs: %w", CleanError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return f, false, api.Errorf("read flavor_extra_specs: %w", CleanError(err))
		}
		f.ExtraSpecs[k] = v.String
	}
	return f, true, rows.Err()
}

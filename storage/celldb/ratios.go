package celldb

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

// emptyRatioCond matches the rows Nova's migrate_empty_ratio selects
// (_get_node_empty_ratio): a live row with any ratio NULL or 0.0.
const emptyRatioCond = liveNode + ` AND (
	cpu_allocation_ratio IS NULL OR cpu_allocation_ratio = 0 OR
	ram_allocation_ratio IS NULL OR ram_allocation_ratio = 0 OR
	disk_allocation_ratio IS NULL OR disk_allocation_ratio = 0)`

// ListEmptyRatioNodes returns up to limit live compute nodes with id > afterID
// that have a NULL or 0.0 ratio, in id order, so that a caller can page past
// rows it had to skip.
func ListEmptyRatioNodes(ctx context.Context, cell *storage.DB, afterID int64, limit int) ([]migrate.NodeRatios, error) {
	q := cell.Rebind(`SELECT id, host, hypervisor_hostname, cpu_allocation_ratio, ram_allocation_ratio, disk_allocation_ratio
		FROM compute_nodes WHERE id > ? AND ` + emptyRatioCond + ` ORDER BY id LIMIT ?`)
	rows, err := cell.QueryContext(ctx, q, afterID, limit)
	if err != nil {
		return nil, cell.Errorf("read compute_nodes ratios: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.NodeRatios
	for rows.Next() {
		var n migrate.NodeRatios
		var host, hhn sql.NullString
		var cpu, ram, disk sql.NullFloat64
		if err := rows.Scan(&n.ID, &host, &hhn, &cpu, &ram, &disk); err != nil {
			return nil, cell.Errorf("read compute_nodes ratios: %w", storage.CleanError(err))
		}
		n.Host, n.HypervisorHostname = storage.NullString(host), storage.NullString(hhn)
		n.CPU, n.RAM, n.Disk = cell.FloatPtr(cpu), cell.FloatPtr(ram), cell.FloatPtr(disk)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read compute_nodes ratios: %w", storage.CleanError(err))
	}
	return out, nil
}

// fillBatch bounds the ids of one UPDATE, well under SQLite's and MySQL's
// placeholder limits.
const fillBatch = 500

// FillEmptyRatios writes fill into the NULL or 0.0 ratio columns of the given
// rows, in one transaction, and sets updated_at to now as Nova's ORM does.
// Each column is re-checked in the UPDATE itself, so a ratio that a running
// nova-compute set meanwhile is kept, as is a row deleted meanwhile. It
// returns how many rows it changed.
func FillEmptyRatios(ctx context.Context, cell *storage.DB, ids []int64, fill migrate.RatioFill, now time.Time) (int, error) {
	var sets []string
	var setArgs []any
	col := func(name string, v *float64) {
		if v == nil {
			return
		}
		sets = append(sets, name+" = CASE WHEN "+name+" IS NULL OR "+name+" = 0 THEN ? ELSE "+name+" END")
		setArgs = append(setArgs, *v)
	}
	col("cpu_allocation_ratio", fill.CPU)
	col("ram_allocation_ratio", fill.RAM)
	col("disk_allocation_ratio", fill.Disk)
	if len(sets) == 0 || len(ids) == 0 {
		return 0, nil
	}
	sets = append(sets, "updated_at = ?")
	setArgs = append(setArgs, cell.TimeArg(&now))
	done := 0
	err := cell.Tx(ctx, func(tx *sqlx.Tx) error {
		done = 0 // a retried transaction starts over
		for start := 0; start < len(ids); start += fillBatch {
			chunk := ids[start:min(start+fillBatch, len(ids))]
			args := append([]any{}, setArgs...)
			for _, id := range chunk {
				args = append(args, id)
			}
			q := cell.Rebind(`UPDATE compute_nodes SET ` + strings.Join(sets, ", ") +
				` WHERE id IN (?` + strings.Repeat(", ?", len(chunk)-1) + `) AND ` + emptyRatioCond)
			res, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return cell.Errorf("update compute_nodes ratios: %w", storage.CleanError(err))
			}
			n, err := res.RowsAffected()
			if err != nil {
				return cell.Errorf("update compute_nodes ratios: %w", storage.CleanError(err))
			}
			done += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return done, nil
}

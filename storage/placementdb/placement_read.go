package placementdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/storage"
)

// LoadPlacementModel reads a Placement database into the rows
// candidates.NewModel takes: whole tables, a few to a statement (allocations
// summed with GROUP BY), never one per provider, all inside one read
// transaction so that a Placement writing meanwhile cannot hand us a
// provider whose parent or trait we did not see.
//
// A FLOAT allocation_ratio has two values on MySQL (RatioMySQLFloat): the
// decimal the server prints (MariaDB: six significant digits, "1.1",
// "1.23457"), which is what PyMySQL hands Placement's Python code
// (AllocationRatio), and the widened float32 (1.100000023841858) that
// Placement's SQL filter computes with on the server (SQLRatio). The
// inventories are read through the binary protocol, which carries the
// float32, with the printed form beside it; the other tables through the
// text protocol (no arguments), which is cheaper for their few columns.
// SQLite's REAL column is one double for both.
func LoadPlacementModel(ctx context.Context, db *storage.DB) (*candidates.ModelInput, error) {
	var in *candidates.ModelInput
	err := db.RawReadTx(ctx, func(query storage.RawQuery) error {
		whole, _, err := readTree(db, query)
		if err != nil {
			return err
		}
		in, err = readPlacementRows(db, query, whole)
		return err
	})
	if err != nil {
		return nil, schemaHint(ctx, db, err)
	}
	return in, nil
}

// readPlacementRows is LoadPlacementModel's reading, through query, of the
// providers in scope (readTree's rows, all or the kept trees') with their
// inventories, usages and links; the name tables are read whole.
func readPlacementRows(db *storage.DB, query storage.RawQuery, scope providerScope) (*candidates.ModelInput, error) {
	in := &candidates.ModelInput{}
	invQuery := `SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, allocation_ratio FROM inventories` + scope.where("resource_provider_id")
	var invArgs []any
	if db.IsMySQL() {
		// The binary protocol (see storage.Prepared): the FLOAT column
		// arrives as the float32 the server computes with (SQLRatio), and
		// its text form, what PyMySQL hands Placement, is the server's own
		// print of it (CAST AS CHAR prints as the text protocol does).
		in.Ratios = candidates.RatioMySQLFloat
		invQuery = `SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, CAST(allocation_ratio AS CHAR), allocation_ratio FROM inventories` + scope.where("resource_provider_id")
		invArgs = []any{storage.Prepared}
	}
	in.Providers = scope.inScope()
	raw3, raw9 := newRawRow(3), newRawRow(9)
	err := func() error {
		if err := scanRaw(db, query, "inventories", raw9, invQuery, invArgs, func() error {
			in.Inventories = push(in.Inventories, candidates.InventoryRow{ProviderID: raw9.int(0), ResourceClassID: raw9.int(1),
				Total: raw9.int(2), Reserved: raw9.int(3), MinUnit: raw9.int(4), MaxUnit: raw9.int(5), StepSize: raw9.int(6),
				AllocationRatio: raw9.float(7), SQLRatio: raw9.widened(8)})
			return raw9.err
		}); err != nil {
			return err
		}
		if err := scanRaw(db, query, "allocations", raw3,
			`SELECT resource_provider_id, resource_class_id, SUM(used) FROM allocations`+scope.where("resource_provider_id")+` GROUP BY resource_provider_id, resource_class_id`, nil,
			func() error {
				in.Usages = push(in.Usages, candidates.UsageRow{ProviderID: raw3.int(0), ResourceClassID: raw3.int(1), Used: raw3.int(2)})
				return raw3.err
			}); err != nil {
			return err
		}
		// The three name tables in one statement, and the two link tables
		// in another: two round trips, not five.
		if err := scanRaw(db, query, "resource_classes, traits and placement_aggregates", raw3,
			`SELECT 0, id, name FROM resource_classes UNION ALL SELECT 1, id, name FROM traits UNION ALL SELECT 2, id, uuid FROM placement_aggregates`, nil,
			tagged(raw3, []*[]candidates.NamedRow{&in.ResourceClasses, &in.Traits, &in.Aggregates}, func() candidates.NamedRow {
				return candidates.NamedRow{ID: raw3.int(1), Name: raw3.str(2)}
			})); err != nil {
			return err
		}
		return scanRaw(db, query, "resource_provider_traits and resource_provider_aggregates", raw3,
			`SELECT 0, resource_provider_id, trait_id FROM resource_provider_traits`+scope.where("resource_provider_id")+
				` UNION ALL SELECT 1, resource_provider_id, aggregate_id FROM resource_provider_aggregates`+scope.where("resource_provider_id"), nil,
			tagged(raw3, []*[]candidates.LinkRow{&in.ProviderTraits, &in.ProviderAggregates}, func() candidates.LinkRow {
				return candidates.LinkRow{ProviderID: raw3.int(1), OtherID: raw3.int(2)}
			}))
	}()
	if err != nil {
		return nil, err
	}
	return in, nil
}

// LoadPlacement reads a Placement database and builds the candidates model.
// A database no consistent Placement can produce (a parent cycle, an
// inventory of a class that does not exist) is reported as one line naming
// the database and the offending row.
func LoadPlacement(ctx context.Context, db *storage.DB) (*candidates.Model, error) {
	return newModel(db)(LoadPlacementModel(ctx, db))
}

// newModel builds the model of rows read from db, naming db in its error.
func newModel(db *storage.DB) func(*candidates.ModelInput, error) (*candidates.Model, error) {
	return func(in *candidates.ModelInput, err error) (*candidates.Model, error) {
		if err != nil {
			return nil, err
		}
		m, err := candidates.NewModel(in)
		if err != nil {
			return nil, db.Errorf("%w", err)
		}
		return m, nil
	}
}

// scanPlacementRows runs q and calls scan for every row, sizing nothing in advance:
// the row count is not known without a second query.
func scanPlacementRows(ctx context.Context, db *storage.DB, tx *sqlx.Tx, table, q string, scan func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return db.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		if err := scan(rows); err != nil {
			return db.Errorf("read %s row %d: %w", table, n, storage.CleanError(err))
		}
	}
	if err := rows.Err(); err != nil {
		return db.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	return nil
}

// placementTablesPresent reports a missing Placement schema as the error an
// operator can act on, rather than MySQL's "table doesn't exist".
func placementTablesPresent(ctx context.Context, db *storage.DB) error {
	for _, t := range []string{"resource_providers", "inventories", "allocations", "resource_classes", "traits",
		"placement_aggregates", "resource_provider_traits", "resource_provider_aggregates"} {
		ok, err := db.TableExists(ctx, t)
		if err != nil {
			return err
		}
		if !ok {
			return db.Errorf("no Placement table %s: is this the Placement database? (rpctl init creates the schema)", t)
		}
	}
	return nil
}

// schemaHint turns a read that failed for want of the Placement schema into
// placementTablesPresent's error. The tables are looked up only once a read
// has failed: eight lookups before every read were eight round trips of
// every `rpctl candidates` (issue 22).
func schemaHint(ctx context.Context, db *storage.DB, err error) error {
	if err == nil {
		return nil
	}
	if perr := placementTablesPresent(ctx, db); perr != nil && ctx.Err() == nil {
		return perr
	}
	return err
}

// tagged scans the rows of a UNION ALL whose first column numbers the
// branch, appending each row to that branch's slice.
func tagged[T any](raw *rawRow, dsts []*[]T, row func() T) func() error {
	return func() error {
		t := raw.int(0)
		if raw.err == nil && (t < 0 || t >= int64(len(dsts))) {
			raw.fail(fmt.Errorf("branch %d of %d", t, len(dsts)))
		}
		if raw.err != nil {
			return raw.err
		}
		*dsts[t] = push(*dsts[t], row())
		return raw.err
	}
}

// push appends v, doubling the capacity when it is full. The tables are
// read without their row counts, and append grows a large slice by a
// quarter, so a large table is allocated and copied several times its
// size, in memory fresh from the kernel (one page fault a page) since a
// one-shot command does not collect (see internal/gcfloor).
// Doubling touches twice the final size at most; the unused end of the
// last allocation is never touched.
func push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 64))
	}
	return append(s, v)
}

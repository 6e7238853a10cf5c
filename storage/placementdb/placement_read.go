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
// Placement's SQL filter computes with on the server (SQLRatio): both are
// read (see readPlacementRows). SQLite's REAL column is one double for both.
func LoadPlacementModel(ctx context.Context, db *storage.DB) (*candidates.ModelInput, error) {
	return loadModel(ctx, db, nil)
}

// loadModel is LoadPlacementModel, calling start (when not nil) with the
// providers as soon as they are read (see candidates.StartModel).
func loadModel(ctx context.Context, db *storage.DB, start func([]candidates.ProviderRow)) (*candidates.ModelInput, error) {
	return readModelTx(ctx, db, func(query storage.RawQuery) (*candidates.ModelInput, error) {
		whole, _, err := readTree(db, query)
		if err != nil {
			return nil, err
		}
		return readPlacementRows(db, query, whole, start)
	})
}

// readModelTx runs read in one read transaction whose last script ends it
// (storage.LastRead: one round trip less).
func readModelTx(ctx context.Context, db *storage.DB, read func(query storage.RawQuery) (*candidates.ModelInput, error)) (*candidates.ModelInput, error) {
	var in *candidates.ModelInput
	err := db.RawReadTx(ctx, func(query storage.RawQuery) error {
		var err error
		in, err = read(query)
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
//
// One query, its branches tagged by their first column (see tagged and
// branches): the database is a network hop away from the operator and
// each query is a round trip (issue 35: candidates ≤ 8 per query, the
// connection included). Where the connection takes several statements
// per query they are separate SELECTs; else a UNION ALL, which MariaDB
// copies into a temporary table before it sends a row (on
// placement-perfload the UNION took the server 6.0 ms, its branches alone
// 3-4 ms). It is the transaction's last query (storage.LastRead).
//
// On MySQL the FLOAT allocation_ratio is read twice through the text
// protocol (one round trip, where the binary protocol costs a prepare and
// an execute): as the text the server prints for the column, the decimal
// PyMySQL hands Placement's Python (MariaDB: six significant digits), which
// Go parses into the double Python's float() makes of it; and as CAST AS
// DOUBLE, the float32 the server computes with, printed as the shortest
// decimal that reads back as that double (checked on 14,664 FLOAT values,
// each read back exactly as the float32 it holds;
// TestLoadPlacementRatioSource keeps checking 2,000 more, and the Python
// value of each against PyMySQL's). The text is the column's own in a
// packed row (rowSet.packed); a UNION ALL (see scanRowSets) would widen
// the FLOAT to a double, so there it is CAST AS CHAR.
func readPlacementRows(db *storage.DB, query storage.RawQuery, scope providerScope, start func([]candidates.ProviderRow)) (*candidates.ModelInput, error) {
	in := &candidates.ModelInput{}
	ratios := []string{"allocation_ratio", "allocation_ratio"}
	if db.IsMySQL() {
		in.Ratios = candidates.RatioMySQLFloat
		ratios = []string{"allocation_ratio", "CAST(allocation_ratio AS DOUBLE)"}
		if !db.ReadsScripts() {
			ratios[0] = "CAST(allocation_ratio AS CHAR)"
		}
	}
	in.Providers = scope.inScope()
	if start != nil {
		start(in.Providers)
	}
	// Room for four rows per provider in each per-provider table, the
	// provider count being known here: grown by doubling from nothing,
	// placement-perfload's 3,000 inventories and 4,000 links left behind
	// arrays as large as what they kept, in fresh pages (a one-shot
	// command does not collect: gcfloor) at about 2 µs a page. Room not
	// filled is never touched. 0.49 ms of 14 (paired median of 121
	// alternated runs; issue 35). A table with more rows grows on as before.
	hint := 4*len(in.Providers) + 64
	in.Inventories = make([]candidates.InventoryRow, 0, hint)
	in.Usages = make([]candidates.UsageRow, 0, hint)
	raw := newRawRow(10)
	var names [3][]candidates.NamedRow
	links := [2][]candidates.LinkRow{make([]candidates.LinkRow, 0, hint), make([]candidates.LinkRow, 0, hint)}
	named := func(dst *[]candidates.NamedRow) func() {
		return func() { *dst = push(*dst, candidates.NamedRow{ID: raw.int(1), Name: raw.str(8)}) }
	}
	link := func(dst *[]candidates.LinkRow) func() {
		return func() { *dst = push(*dst, candidates.LinkRow{ProviderID: raw.int(1), OtherID: raw.int(2)}) }
	}
	branch := []func(){
		func() {
			in.Inventories = push(in.Inventories, candidates.InventoryRow{ProviderID: raw.int(1), ResourceClassID: raw.int(2),
				Total: raw.int(3), Reserved: raw.int(4), MinUnit: raw.int(5), MaxUnit: raw.int(6), StepSize: raw.int(7),
				AllocationRatio: raw.float(8), SQLRatio: raw.float(9)})
		},
		func() {
			in.Usages = push(in.Usages, candidates.UsageRow{ProviderID: raw.int(1), ResourceClassID: raw.int(2), Used: raw.int(3)})
		},
		named(&names[0]), named(&names[1]), named(&names[2]),
		link(&links[0]), link(&links[1]),
	}
	// Each branch's columns and where its rows put them in raw (names in
	// column 8, a string in every row of the branch that has them, so
	// that no column of the UNION mixes a number's and a name's type more
	// than it must).
	where := scope.where("resource_provider_id")
	// The per-provider tables' columns are NOT NULL numbers in
	// Placement's schema (the usages' sums too): packed.
	sets := []rowSet{
		{cols: append([]string{"resource_provider_id", "resource_class_id", "total", "reserved", "min_unit", "max_unit", "step_size"}, ratios...),
			at: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, from: "inventories" + where, packed: true},
		{cols: []string{"resource_provider_id", "resource_class_id", "CAST(SUM(used) AS SIGNED)"}, at: []int{1, 2, 3},
			from: "allocations" + where + " GROUP BY resource_provider_id, resource_class_id", packed: true},
		{cols: []string{"id", "name"}, at: []int{1, 8}, from: "resource_classes"},
		{cols: []string{"id", "name"}, at: []int{1, 8}, from: "traits"},
		{cols: []string{"id", "uuid"}, at: []int{1, 8}, from: "placement_aggregates"},
		{cols: []string{"resource_provider_id", "trait_id"}, at: []int{1, 2}, from: "resource_provider_traits" + where, packed: true},
		{cols: []string{"resource_provider_id", "aggregate_id"}, at: []int{1, 2}, from: "resource_provider_aggregates" + where, packed: true},
	}
	err := scanRowSets(db, query, "inventories, allocations, names and links", raw, sets, func(t int) error {
		branch[t]()
		return raw.err
	})
	if err != nil {
		return nil, err
	}
	in.ResourceClasses, in.Traits, in.Aggregates = names[0], names[1], names[2]
	in.ProviderTraits, in.ProviderAggregates = links[0], links[1]
	return in, nil
}

// LoadPlacement reads a Placement database and builds the candidates model.
// A database no consistent Placement can produce (a parent cycle, an
// inventory of a class that does not exist) is reported as one line naming
// the database and the offending row.
func LoadPlacement(ctx context.Context, db *storage.DB) (*candidates.Model, error) {
	var started *candidates.ModelStart
	in, err := loadModel(ctx, db, func(p []candidates.ProviderRow) { started = candidates.StartModel(p) })
	return buildModel(db, started, in, err)
}

// buildModel completes the model started on in's providers (a read that
// returns no error has started it), naming db in its error.
func buildModel(db *storage.DB, started *candidates.ModelStart, in *candidates.ModelInput, err error) (*candidates.Model, error) {
	if err != nil {
		return nil, err
	}
	m, err := started.Build(in)
	if err != nil {
		return nil, db.Errorf("%w", err)
	}
	return m, nil
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

package placementdb

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// rawRow holds a row's columns as the driver hands them (int64 and float32
// for the MySQL driver's integer and FLOAT columns, []byte for its decimals
// and text, SQLite's own types) and converts them here, as database/sql's
// Scan would into typed destinations but without its reflection and the
// strings it allocates per number: that conversion was the largest part of
// loading a model in a profile of `rpctl candidates`.
type rawRow struct {
	vals []driver.Value
	// text, where not nil, is the column's decimal as a packed row
	// (rowSet.packed) carried it, and stands instead of vals.
	text [][]byte
	err  error
}

func newRawRow(n int) *rawRow {
	return &rawRow{vals: make([]driver.Value, n), text: make([][]byte, n)}
}

// scanRaw runs q (with args, when it has any) through query and calls scan
// for every row, the row's values in raw, the first failed conversion in
// raw.err (reset for each row). A q of several statements (see branches)
// gives its rows one result set after the other, each of raw's width.
func scanRaw(db *storage.DB, query storage.RawQuery, table string, raw *rawRow, q string, args []any, scan func() error) error {
	rows, err := query(q, args...)
	if err != nil {
		return db.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	defer rows.Close()
	return eachRow(db, table, rows, 0, func(int) []driver.Value { return raw.vals }, func(int) error {
		raw.err = nil
		return scan()
	})
}

// eachRow reads the rows of rows' result sets, sets of them (0: as many as
// come), each into dest(set), whose length is the set's column count, and
// calls row with the set's number. Rows are numbered across the sets in
// errors.
func eachRow(db *storage.DB, table string, rows driver.Rows, sets int, dest func(set int) []driver.Value, row func(set int) error) error {
	next, _ := rows.(driver.RowsNextResultSet)
	set, vals := 0, dest(0)
	if c := len(rows.Columns()); c != len(vals) {
		return db.Errorf("read %s: %d columns, want %d", table, c, len(vals))
	}
	for n := 1; ; n++ {
		if err := rows.Next(vals); err != nil {
			if !errors.Is(err, io.EOF) {
				return db.Errorf("read %s: %w", table, storage.CleanError(err))
			}
			if set++; set == sets {
				return nil
			}
			if next == nil || !next.HasNextResultSet() {
				if sets == 0 {
					return nil
				}
				return db.Errorf("read %s: %d result sets, want %d", table, set, sets)
			}
			if err := next.NextResultSet(); errors.Is(err, io.EOF) && sets == 0 {
				return nil
			} else if err != nil {
				return db.Errorf("read %s: %w", table, storage.CleanError(err))
			}
			vals = dest(set)
			if c := len(rows.Columns()); c != len(vals) {
				return db.Errorf("read %s: %d columns, want %d", table, c, len(vals))
			}
			n--
			continue
		}
		if err := row(set); err != nil {
			return db.Errorf("read %s row %d: %w", table, n, storage.CleanError(err))
		}
	}
}

// rowSet is one SELECT of scanRowSets: its columns, FROM what (with any
// WHERE and GROUP BY), and at which column of the rawRow each lands.
//
// packed: every column is a number that is never NULL (or such a number's
// text), and on a connection that takes scripts the row travels as one
// text column, CONCAT_WS(',', cols), split here. The go-sql-driver parses
// every integer column of the text protocol into an int64 and boxes it
// into an interface, an allocation for most values, and each column
// costs its own length prefix: for placement-perfload's 3,000
// inventories, 4,000 trait and aggregate links, one []byte a row made
// rpctl candidates 0.34 to 0.45 ms faster (paired medians of 151; issue
// 35), while MariaDB took the same time to send either (1.49 and 1.50 ms
// for the inventories through the driver). The text of each column is
// the one the column itself has in the text protocol, a FLOAT's too (its
// six significant digits on MariaDB: the decimal PyMySQL hands
// Placement's Python; TestLoadPlacementRatioSource compares every ratio
// with PyMySQL's).
type rowSet struct {
	cols   []string
	from   string
	at     []int
	packed bool
}

// scanRowSets reads sets in one round trip, the transaction's last query
// (storage.LastRead), and calls scan with each row's set number, its
// values in raw at the set's columns. On a connection that
// takes scripts (storage.ReadsScripts) each set is a statement of its own
// columns only, their rows told apart by the statement they come from: a
// tag and the padding to a common width cost the server and the client
// 0.3 ms of placement-perfload's 0.7 MB read (2.50 against 2.20 ms, medians
// of 201 through the driver; issue 35). Elsewhere the sets are the tagged,
// padded branches of a UNION ALL (see branches), raw as wide as the
// widest column.
func scanRowSets(db *storage.DB, query storage.RawQuery, table string, raw *rawRow, sets []rowSet, scan func(set int) error) error {
	args := []any{storage.LastRead}
	selects := make([]string, len(sets))
	if !db.ReadsScripts() {
		for i, s := range sets {
			cols := make([]string, len(raw.vals))
			cols[0] = strconv.Itoa(i)
			for j := 1; j < len(cols); j++ {
				cols[j] = "NULL"
			}
			for j, c := range s.cols {
				cols[s.at[j]] = c
			}
			selects[i] = "SELECT " + strings.Join(cols, ", ") + " FROM " + s.from
		}
		q, _ := branches(db, selects, nil)
		return scanRaw(db, query, table, raw, q, args, func() error {
			t := raw.int(0)
			if raw.err == nil && (t < 0 || t >= int64(len(sets))) {
				raw.fail(fmt.Errorf("branch %d of %d", t, len(sets)))
			}
			if raw.err != nil {
				return raw.err
			}
			return scan(int(t))
		})
	}
	for i, s := range sets {
		if s.packed {
			selects[i] = "SELECT CONCAT_WS(',', " + strings.Join(s.cols, ", ") + ") FROM " + s.from
			continue
		}
		selects[i] = "SELECT " + strings.Join(s.cols, ", ") + " FROM " + s.from
	}
	rows, err := query(strings.Join(selects, "; "), args...)
	if err != nil {
		return db.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	defer rows.Close()
	buf := make([]driver.Value, len(raw.vals))
	width := func(set int) int {
		if sets[set].packed {
			return 1
		}
		return len(sets[set].cols)
	}
	return eachRow(db, table, rows, len(sets), func(set int) []driver.Value { return buf[:width(set)] }, func(set int) error {
		s := &sets[set]
		raw.err = nil
		if s.packed {
			raw.unpack(buf[0], s.at)
		} else {
			for j, v := range buf[:len(s.cols)] {
				raw.vals[s.at[j]] = v
				raw.text[s.at[j]] = nil
			}
		}
		if raw.err != nil {
			return raw.err
		}
		return scan(set)
	})
}

// unpack splits a packed row's text (rowSet.packed) at its commas into
// the columns at.
func (r *rawRow) unpack(v driver.Value, at []int) {
	b, ok := v.([]byte)
	if !ok {
		if v == nil {
			r.fail(errNullNumber)
		} else {
			r.fail(fmt.Errorf("unexpected %T where the row's text is required", v))
		}
		return
	}
	// One pass over the bytes: the values are a few digits each, shorter
	// than a call to bytes.IndexByte is worth.
	n, start := 0, 0
	for k, c := range b {
		if c != ',' {
			continue
		}
		if n == len(at)-1 {
			r.fail(fmt.Errorf("more than %d values", len(at)))
			return
		}
		r.text[at[n]] = b[start:k:k]
		n, start = n+1, k+1
	}
	r.text[at[n]] = b[start:len(b):len(b)]
	if n++; n != len(at) {
		// CONCAT_WS leaves NULL columns out.
		r.fail(fmt.Errorf("%d values where %d are required (a NULL among them)", n, len(at)))
	}
}

// branches joins SELECTs of the same columns, each tagged by its first
// column, into one query (one round trip): as separate statements where
// the database reads scripts (storage.ReadsScripts), else as a UNION ALL.
// MariaDB copies a UNION's rows into a temporary table before it sends
// any, each row as wide as the widest column of any branch; separate
// statements stream each table's rows as they are read. Values are
// written into the text as literals (sqlutil.Inline), so that a query of
// several statements needs no prepared one; a value that cannot be a
// literal keeps the UNION and its binding.
func branches(db *storage.DB, selects []string, args []any) (string, []any) {
	if db.ReadsScripts() {
		if q, rest := sqlutil.Inline(db, strings.Join(selects, "; "), args...); rest == nil {
			return q, nil
		}
	}
	return sqlutil.Inline(db, strings.Join(selects, " UNION ALL "), args...)
}

var errNullNumber = errors.New("NULL where a number is required")

func (r *rawRow) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *rawRow) int(i int) int64 {
	if t := r.text[i]; t != nil {
		v, err := parseInt(t)
		if err != nil {
			r.fail(err)
		}
		return v
	}
	v, ok := r.nullInt(i)
	if !ok {
		r.fail(errNullNumber)
	}
	return v
}

// nullInt returns the column as an integer, ok false for NULL.
func (r *rawRow) nullInt(i int) (int64, bool) {
	var v int64
	var err error
	if t := r.text[i]; t != nil {
		if v, err = parseInt(t); err != nil {
			r.fail(err)
		}
		return v, true
	}
	switch x := r.vals[i].(type) {
	case nil:
		return 0, false
	case int64:
		return x, true
	case []byte:
		v, err = strconv.ParseInt(string(x), 10, 64)
	case string:
		v, err = strconv.ParseInt(x, 10, 64)
	case uint64:
		v = int64(x)
		if v < 0 {
			err = fmt.Errorf("%d is out of range", x)
		}
	case float64, float32:
		f := toFloat64(x)
		v = int64(f)
		if float64(v) != f || math.IsInf(f, 0) {
			err = fmt.Errorf("%v is not an integer", x)
		}
	default:
		err = fmt.Errorf("unexpected %T where an integer is required", x)
	}
	if err != nil {
		r.fail(err)
	}
	return v, true
}

func (r *rawRow) float(i int) float64 {
	var v float64
	var err error
	if t := r.text[i]; t != nil {
		if v, err = strconv.ParseFloat(string(t), 64); err != nil {
			r.fail(err)
		}
		return v
	}
	switch x := r.vals[i].(type) {
	case nil:
		err = errNullNumber
	case float64:
		return x
	case int64:
		return float64(x)
	case []byte:
		v, err = strconv.ParseFloat(string(x), 64)
	case string:
		v, err = strconv.ParseFloat(x, 64)
	default:
		err = fmt.Errorf("unexpected %T where a number is required", x)
	}
	if err != nil {
		r.fail(err)
	}
	return v
}

// parseInt is strconv.ParseInt(string(b), 10, 64) without making the
// string: up to 18 digits cannot overflow; the rest, and any error, are
// strconv's.
func parseInt(b []byte) (int64, error) {
	d := b
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	var v int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(b), 10, 64)
		}
		v = v*10 + int64(c-'0')
	}
	if len(d) < len(b) {
		v = -v
	}
	return v, nil
}

// str returns the column as a string, "" for NULL.
func (r *rawRow) str(i int) string {
	if t := r.text[i]; t != nil {
		return string(t)
	}
	switch x := r.vals[i].(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

func toFloat64(x any) float64 {
	if f, ok := x.(float32); ok {
		return float64(f)
	}
	return x.(float64)
}

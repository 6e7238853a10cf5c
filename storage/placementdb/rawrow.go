package placementdb

import (
	"database/sql"
	"errors"
	"strconv"
)

// rawRow reads a row's columns as the driver's bytes and converts them
// here. database/sql's own conversion into typed destinations (reflection
// and a string allocated per number) was the largest part of loading a
// model: 15% of `rpctl candidates`' CPU on placement-perfload.
type rawRow struct {
	cols []sql.RawBytes
	dest []any
	err  error
}

func newRawRow(n int) *rawRow {
	r := &rawRow{cols: make([]sql.RawBytes, n), dest: make([]any, n)}
	for i := range r.cols {
		r.dest[i] = &r.cols[i]
	}
	return r
}

// scan reads the current row; the accessors then convert its columns, the
// first failure kept in r.err (reset here).
func (r *rawRow) scan(rows *sql.Rows) error {
	r.err = nil
	return rows.Scan(r.dest...)
}

var errNullNumber = errors.New("NULL where a number is required")

func (r *rawRow) int(i int) int64 {
	v, ok := r.nullInt(i)
	if !ok && r.err == nil {
		r.err = errNullNumber
	}
	return v
}

// nullInt returns the column as an integer, ok false for NULL.
func (r *rawRow) nullInt(i int) (int64, bool) {
	b := r.cols[i]
	if b == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil && r.err == nil {
		r.err = err
	}
	return v, true
}

func (r *rawRow) float(i int) float64 {
	b := r.cols[i]
	if b == nil {
		if r.err == nil {
			r.err = errNullNumber
		}
		return 0
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil && r.err == nil {
		r.err = err
	}
	return v
}

// str returns the column as a string, "" for NULL.
func (r *rawRow) str(i int) string { return string(r.cols[i]) }

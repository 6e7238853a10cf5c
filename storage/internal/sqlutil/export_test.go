package sqlutil

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// ExecBound is execBound for the external tests, which need the schema
// package (and so cannot live inside this one) to compare the literal and
// bound forms of one insert.
func (w *RowInsert) ExecBound(ctx context.Context, tx *sqlx.Tx) ([]InsertChunk, error) {
	return w.execBound(ctx, tx)
}

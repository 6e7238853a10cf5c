package sqlutil

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestIsUnknownColumn(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1054, Message: "Unknown column 'compute_id' in 'where clause'"}, true},
		{fmt.Errorf("read: %w", &mysql.MySQLError{Number: 1054}), true},
		{&mysql.MySQLError{Number: 1146, Message: "Table 'nova.instances' doesn't exist"}, false},
		{errors.New("SQL logic error: no such column: compute_id (1)"), true},
		{errors.New("SQL logic error: no such table: instances (1)"), false},
		{errors.New("insert into instances: SQL logic error: table instances has no column named compute_id (1)"), true},
		{nil, false},
	} {
		if got := IsUnknownColumn(tc.err); got != tc.want {
			t.Errorf("IsUnknownColumn(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

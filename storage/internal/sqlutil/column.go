package sqlutil

import (
	"errors"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// IsUnknownColumn reports whether err is the database saying a column the
// statement names does not exist (MySQL's ER_BAD_FIELD_ERROR 1054,
// SQLite's "no such column" in a query, "has no column named" in an
// INSERT's column list): a schema older than the release the command
// was told, which deserves a sentence naming the release, not the driver's.
func IsUnknownColumn(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1054
	}
	return err != nil && (strings.Contains(err.Error(), "no such column") || strings.Contains(err.Error(), "has no column named"))
}

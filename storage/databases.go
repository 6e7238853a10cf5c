package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/rpctl/rpctl/internal/dsn"
)

// Source is a database URL and where it was given, for error messages.
type Source struct {
	URL    string
	Origin string // "--cell-db", "nova.conf:4", ...
}

// Sources are every way a command can be told where the databases are.
type Sources struct {
	Embedded    string   // --db FILE: one SQLite file with all three schemas
	CellDBs     []Source // --cell-db, repeatable: exactly these cells
	ConfigCell  Source   // [database] connection
	APIDB       Source   // --api-db or [api_database] connection
	PlacementDB Source   // --placement-db or [placement_database] connection
	// CellMappings reads the API database's cell_mappings, where the cells
	// come from when no cell database is given (apidb.ListCellMappings:
	// that table's SQL lives in storage/apidb, which imports this
	// package). Needed only then.
	CellMappings func(ctx context.Context, api *DB) ([]CellMapping, error)
}

// errNoCellMappings is a caller's mistake: cells to be read from
// cell_mappings without a reader for it.
var errNoCellMappings = errors.New("storage: the cells come from cell_mappings but Sources.CellMappings is not set")

// listCellMappings reads the cells of api with s.CellMappings.
func (s Sources) listCellMappings(ctx context.Context, api *DB) ([]CellMapping, error) {
	if s.CellMappings == nil {
		return nil, errNoCellMappings
	}
	return s.CellMappings(ctx, api)
}

// Need says which databases a command cannot work without.
type Need uint8

// The databases a command may need.
const (
	NeedCells Need = 1 << iota
	NeedAPI
	NeedPlacement
	// PlacementReadScripts is no database but how the Placement database
	// is opened (OpenReadScripts): for a command that only reads it, so
	// that RawReadTx sends several statements in one round trip.
	PlacementReadScripts
)

// Databases are the open connections of one rpctl run.
type Databases struct {
	Cells     []*DB // every cell to work on, cell0 excluded
	API       *DB   // nil when not configured
	Placement *DB   // nil when not configured
	// Embedded is true for --db: cells, API and Placement share one file.
	Embedded bool
	opened   []*DB
	// cell0 is cell0's database as its cell mapping names it, when the
	// cells came from cell_mappings; Cell0 opens it on first use.
	cell0       *Source
	cell0DB     *DB
	cell0Mapped string
}

// Cell0 opens, on first use, the database of cell0's mapping (the run's
// cells exclude it; the instance mapping migrations need it, as Nova's walk
// every cell mapping). It returns nil when the cells did not come from
// cell_mappings or there is no cell0 mapping.
func (d *Databases) Cell0(ctx context.Context) (*DB, error) {
	if d.cell0DB != nil || d.cell0 == nil {
		return d.cell0DB, nil
	}
	t, err := dsn.Parse(d.cell0.URL)
	if err != nil {
		return nil, fmt.Errorf("%s (from %s): %w", roleLabel(RoleCell, "cell0"), d.cell0.Origin, err)
	}
	db, err := Open(ctx, t, RoleCell, "cell0")
	if err != nil {
		return nil, err
	}
	db.MappingUUID = d.cell0Mapped
	d.opened = append(d.opened, db)
	d.cell0DB = db
	return db, nil
}

// Close closes every connection.
func (d *Databases) Close() error {
	var errs []error
	for _, db := range d.opened {
		errs = append(errs, db.Close())
	}
	return errors.Join(errs...)
}

// EmbeddedCellName is the cell name of the embedded database's only cell.
const EmbeddedCellName = "cell1"

// cell0UUID is Nova's fixed cell0 mapping UUID: cell0 holds instances that
// failed to schedule and has no compute nodes.
const cell0UUID = "00000000-0000-0000-0000-000000000000"

// ErrNoDatabase is returned when a needed database is not configured.
var ErrNoDatabase = errors.New("no database configured")

// Connect opens what s names: the databases in need must be configured, those
// in want are opened when they are. When cells are wanted and no cell
// database is given explicitly, the cells come from the API database's
// cell_mappings (templated URLs expanded from [database] connection), else
// from [database] connection.
func Connect(ctx context.Context, s Sources, need, want Need) (*Databases, error) {
	want |= need
	d := &Databases{}
	fail := func(err error) (*Databases, error) {
		d.Close()
		return nil, err
	}
	if s.Embedded != "" {
		if len(s.CellDBs) > 0 || s.APIDB.URL != "" || s.PlacementDB.URL != "" {
			return nil, errors.New("--db (the embedded file) cannot be combined with --cell-db, --api-db or --placement-db")
		}
		db, err := Open(ctx, dsn.SQLiteFile(s.Embedded), RoleCell, EmbeddedCellName)
		if err != nil {
			return nil, err
		}
		d.opened = append(d.opened, db)
		d.Embedded = true
		d.Cells = []*DB{db}
		d.API = &DB{DB: db.DB, Role: RoleAPI, Target: db.Target}
		d.Placement = &DB{DB: db.DB, Role: RolePlacement, Target: db.Target}
		return d, nil
	}
	open := func(src Source, role Role, name string) (*DB, error) {
		t, err := dsn.Parse(src.URL)
		if err != nil {
			return nil, fmt.Errorf("%s (from %s): %w", roleLabel(role, name), src.Origin, err)
		}
		opener := Open
		if role == RolePlacement && want&PlacementReadScripts != 0 {
			opener = OpenReadScripts
		}
		db, err := opener(ctx, t, role, name)
		if err != nil {
			return nil, err
		}
		d.opened = append(d.opened, db)
		return db, nil
	}
	var err error
	if s.APIDB.URL != "" && want&(NeedAPI|NeedCells) != 0 {
		if d.API, err = open(s.APIDB, RoleAPI, ""); err != nil {
			return fail(err)
		}
	}
	if s.PlacementDB.URL != "" && want&NeedPlacement != 0 {
		if d.Placement, err = open(s.PlacementDB, RolePlacement, ""); err != nil {
			return fail(err)
		}
	}
	if want&NeedCells != 0 {
		switch {
		case len(s.CellDBs) > 0:
			for i, src := range s.CellDBs {
				db, err := open(src, RoleCell, cellNameFromURL(src.URL, i))
				if err != nil {
					return fail(err)
				}
				d.Cells = append(d.Cells, db)
			}
		case d.API != nil:
			cells, err := s.listCellMappings(ctx, d.API)
			if err != nil {
				return fail(err)
			}
			for _, c := range cells {
				if c.UUID == cell0UUID || c.Name == "cell0" {
					// Opened only when asked for (Cell0); a bad URL is
					// an error then.
					if u, err := ExpandCellURL(c.DatabaseConnection, s.ConfigCell.URL); err == nil && d.cell0 == nil {
						d.cell0 = &Source{URL: u, Origin: "cell_mappings " + c.Name}
						d.cell0Mapped = c.UUID
					}
					continue
				}
				u, err := ExpandCellURL(c.DatabaseConnection, s.ConfigCell.URL)
				if err != nil {
					return fail(fmt.Errorf("cell mapping %q (%s): %w", c.Name, c.UUID, err))
				}
				db, err := open(Source{URL: u, Origin: "cell_mappings " + c.Name}, RoleCell, c.Name)
				if err != nil {
					return fail(err)
				}
				db.MappingUUID = c.UUID
				d.Cells = append(d.Cells, db)
			}
			if len(d.Cells) == 0 && s.ConfigCell.URL != "" {
				db, err := open(s.ConfigCell, RoleCell, "default")
				if err != nil {
					return fail(err)
				}
				d.Cells = append(d.Cells, db)
			}
		case s.ConfigCell.URL != "":
			db, err := open(s.ConfigCell, RoleCell, "default")
			if err != nil {
				return fail(err)
			}
			d.Cells = append(d.Cells, db)
		}
		if len(d.Cells) == 0 && need&NeedCells != 0 {
			return fail(fmt.Errorf("%w for the Nova cell: give --db FILE (the embedded default), --cell-db URL, or --config-file nova.conf with [database] connection (or [api_database] connection with cell mappings)", ErrNoDatabase))
		}
	}
	if need&NeedAPI != 0 && d.API == nil {
		return fail(fmt.Errorf("%w for the Nova API: give --db FILE (the embedded default), --api-db URL, or --config-file nova.conf with [api_database] connection", ErrNoDatabase))
	}
	if need&NeedPlacement != 0 && d.Placement == nil {
		return fail(fmt.Errorf("%w for Placement: give --db FILE (the embedded default), --placement-db URL, or --config-file placement.conf with [placement_database] connection", ErrNoDatabase))
	}
	return d, nil
}

func roleLabel(role Role, name string) string {
	if role == RoleCell && name != "" {
		return fmt.Sprintf("cell %q database", name)
	}
	return fmt.Sprintf("%s database", role)
}

// cellNameFromURL names a --cell-db cell by its database name, which is how
// operators tell cells apart (nova_cell1, nova_cell2, ...).
func cellNameFromURL(raw string, i int) string {
	if t, err := dsn.Parse(raw); err == nil && t.Database != "" {
		return t.Database
	}
	return fmt.Sprintf("cell%d", i+1)
}

// ExpandCellURL expands Nova's templated cell_mappings.database_connection
// ("{scheme}://{username}:{password}@{hostname}/{path}") from the local
// [database] connection, as nova.objects.CellMapping.format_db_url does:
// user, password, path, query and fragment as written (still
// percent-encoded, so a password holding "/" or "@" survives), the host name
// lower-cased. A plain URL is returned unchanged.
func ExpandCellURL(tmpl, local string) (string, error) {
	if !strings.Contains(tmpl, "{") {
		return tmpl, nil
	}
	if local == "" {
		return "", errors.New("database_connection is a template but no [database] connection is configured to fill it from")
	}
	u, err := url.Parse(local)
	if err != nil {
		return "", fmt.Errorf("[database] connection is not a URL: %v", errors.Unwrap(err))
	}
	subs := map[string]string{
		"scheme":   u.Scheme,
		"username": "",
		"password": "",
		"hostname": strings.ToLower(u.Hostname()),
		"port":     u.Port(),
		"query":    u.RawQuery,
		"fragment": u.EscapedFragment(),
		"path":     strings.TrimLeft(u.EscapedPath(), "/"),
	}
	// Python's urlsplit: the netloc ends at the first "/", "?" or "#", the
	// user information at its last "@", the user name at the first ":".
	if _, netloc, ok := strings.Cut(local, "://"); ok {
		if i := strings.IndexAny(netloc, "/?#"); i >= 0 {
			netloc = netloc[:i]
		}
		if at := strings.LastIndex(netloc, "@"); at >= 0 {
			subs["username"], subs["password"], _ = strings.Cut(netloc[:at], ":")
		}
	}
	var b strings.Builder
	rest := tmpl
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated '{' in template %s", dsn.Redact(tmpl))
		}
		key := rest[i+1 : i+j]
		v, ok := subs[key]
		if !ok {
			return "", fmt.Errorf("unknown template field {%s} in %s", key, dsn.Redact(tmpl))
		}
		b.WriteString(rest[:i])
		b.WriteString(v)
		rest = rest[i+j+1:]
	}
	return b.String(), nil
}

// CellMapping is a row of the API database's cell_mappings, as Connect
// opens the cells it names (read by Sources.CellMappings).
type CellMapping struct {
	ID                 int64  `db:"id"`
	UUID               string `db:"uuid"`
	Name               string `db:"name"`
	DatabaseConnection string `db:"database_connection"`
}

// OpenCell0 creates, when it does not exist, Nova's cell0 database beside
// cell (the one CellConnectionURL(cell, true) names, with cell's character
// set on MySQL) and opens it through that URL, as Nova will reach it.
func OpenCell0(ctx context.Context, cell *DB) (*DB, error) {
	u, err := CellConnectionURL(cell, true)
	if err != nil {
		return nil, err
	}
	t, err := dsn.Parse(u)
	if err != nil {
		return nil, cell.Errorf("cell0: %v", err)
	}
	if cell.IsMySQL() {
		if len(t.Database) > 64 {
			return nil, cell.Errorf("cell0's database name %q is longer than MySQL's 64 characters", t.Database)
		}
		var charset string
		if err := cell.GetContext(ctx, &charset, `SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()`); err != nil {
			return nil, cell.Errorf("read its character set: %w", CleanError(err))
		}
		create := "CREATE DATABASE IF NOT EXISTS `" + strings.ReplaceAll(t.Database, "`", "``") + "` CHARACTER SET " + charset
		if _, err := cell.ExecContext(ctx, create); err != nil {
			return nil, cell.Errorf("create cell0's database %s: %w", t.Database, CleanError(err))
		}
	}
	return Open(ctx, t, RoleCell, "cell0")
}

// CellConnectionURL is the SQLAlchemy URL, password included, that a
// cell_mappings.database_connection needs for Nova (and rpctl) to reach db.
// With cell0 it names Nova's conventional "<database>_cell0" beside it
// (nova-manage cell_v2 map_cell0's default), which OpenCell0 creates.
func CellConnectionURL(db *DB, cell0 bool) (string, error) {
	suffix := ""
	if cell0 {
		suffix = "_cell0"
	}
	if !db.IsMySQL() {
		return "sqlite:///" + db.Target.Database + suffix, nil
	}
	cfg, err := mysql.ParseDSN(db.Target.DSN)
	if err != nil {
		return "", db.Errorf("%v", err)
	}
	u := url.URL{Scheme: "mysql+pymysql", User: url.UserPassword(cfg.User, cfg.Passwd), Path: "/" + cfg.DBName + suffix, RawQuery: "charset=utf8"}
	if cfg.Net == "unix" {
		u.Host = "localhost"
		u.RawQuery += "&unix_socket=" + url.QueryEscape(cfg.Addr)
	} else {
		u.Host = cfg.Addr
	}
	return u.String(), nil
}

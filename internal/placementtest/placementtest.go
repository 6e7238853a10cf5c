// Package placementtest gives integration tests a fresh Placement: an empty
// MariaDB database with rpctl's Placement schema (what placement-manage db
// sync leaves, standard classes and traits included) and the real
// placement-api serving it.
package placementtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/schema"
)

// Placement is one fresh Placement database with the real API on it.
type Placement struct {
	DB   *storage.DB // open until the test ends
	URL  string      // SQLAlchemy URL of the database (for --placement-db)
	Base string      // the placement-api's base URL
}

// New creates the database and starts placement-api on it; both go when the
// test ends.
func New(t testing.TB) Placement {
	t.Helper()
	p := NewDB(t)
	p.Base = testdb.PlacementAPI(t, p.URL)
	return p
}

// NewDB is New without the API, for tests that start placement-api with a
// configuration of their own (testdb.PlacementAPIConf).
func NewDB(t testing.TB) Placement {
	t.Helper()
	return NewDBOf(t, release.Default)
}

// NewDBOf is NewDB with release rel's schema (what that release's db sync
// leaves).
func NewDBOf(t testing.TB, rel release.Name) Placement {
	t.Helper()
	ctx := context.Background()
	my := testdb.NewMySQL(t)
	tg, err := dsn.Parse(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, tg, storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.InitRelease(ctx, db, rel, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	return Placement{DB: db, URL: my.URL}
}

// SQLite is an empty Placement schema in a SQLite file of the test's own,
// for the tests that run on both engines.
func SQLite(t testing.TB) *storage.DB {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "placement.db")), storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Init(ctx, db, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	return db
}

// MySQL is an empty Placement schema on the test MariaDB, without an API.
func MySQL(t testing.TB) *storage.DB { t.Helper(); return NewDB(t).DB }

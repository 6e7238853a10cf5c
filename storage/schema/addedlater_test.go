package schema_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/schema"
)

// TestInitAddsTablesAddedLater: an API database rpctl created before the
// aggregate tables were in its schema gets exactly those from init; a part
// missing any other table is still refused.
func TestInitAddsTablesAddedLater(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		drop    []string
		created []string
		refused bool
	}{
		{name: "aggregate tables missing", drop: []string{"aggregate_metadata", "aggregate_hosts", "aggregates"}, created: []string{"aggregates", "aggregate_hosts", "aggregate_metadata"}},
		{name: "one of them missing", drop: []string{"aggregate_metadata"}, refused: true},
		{name: "another table missing", drop: []string{"flavor_projects"}, refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "api.db")), storage.RoleAPI, "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := schema.Init(ctx, db, schema.PartAPI); err != nil {
				t.Fatal(err)
			}
			for _, tb := range tc.drop {
				if _, err := db.ExecContext(ctx, "DROP TABLE "+tb); err != nil {
					t.Fatal(err)
				}
			}
			res, err := schema.Init(ctx, db, schema.PartAPI)
			if tc.refused {
				if err == nil {
					t.Fatalf("init patched a schema missing %v: %+v", tc.drop, res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res[0].Created, tc.created) {
				t.Errorf("created %v, want %v", res[0].Created, tc.created)
			}
			again, err := schema.Init(ctx, db, schema.PartAPI)
			if err != nil || len(again[0].Created) != 0 || len(again[0].Present) != len(schema.Tables(schema.PartAPI)) {
				t.Errorf("second init: %+v %v", again, err)
			}
		})
	}
}

package cmd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rpctl/rpctl/storage"
)

// TestClaimsHealAPIBackend runs the heal parity steps with `rpctl claims
// heal` on the databases on one copy of the cloud and through the real
// placement-api (--os-endpoint: GET and PUT /allocations/{consumer} at
// 1.28) on a twin copy, and requires the same exit codes, the same output
// and the same answers from Placement for every consumer and provider after
// each step.
func TestClaimsHealAPIBackend(t *testing.T) {
	c := newHealCloud()
	dbSide := buildHealCloud(t, c)
	apiSide := cloneSide(t, dbSide)
	dbSide.writeNovaConf(t)
	// The API side's configuration names no Placement database: heal must
	// reach Placement through the API only.
	apiConf := filepath.Join(t.TempDir(), "nova.conf")
	if err := os.WriteFile(apiConf, []byte(fmt.Sprintf("[database]\nconnection = %s\n[api_database]\nconnection = %s\n",
		apiSide.cell.URL, apiSide.api.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	var consumers, providers []string
	for _, in := range c.instances {
		consumers = append(consumers, in.UUID)
	}
	for _, m := range c.migrations {
		consumers = append(consumers, m.UUID)
	}
	for _, n := range c.nodes {
		providers = append(providers, *n.UUID)
	}
	compare := func(step string) {
		t.Helper()
		want, got := dbSide.consumersView(t, consumers, providers), apiSide.consumersView(t, consumers, providers)
		for _, k := range sortedKeysAny(want) {
			if !reflect.DeepEqual(want[k], got[k]) {
				t.Errorf("%s: GET %s:\n database: %v\n API:      %v", step, k, want[k], got[k])
			}
		}
	}
	compare("before")
	ctx := context.Background()
	dbCell, apiCell := openDB(t, dbSide.cell, storage.RoleCell), openDB(t, apiSide.cell, storage.RoleCell)
	for _, st := range healSteps() {
		for _, db := range []*storage.DB{dbCell, apiCell} {
			if err := storage.InsertCellRows(ctx, db, storage.CellRows{Instances: st.add}); err != nil {
				t.Fatal(err)
			}
		}
		dOut, dErr, dCode := rpctl(t, append([]string{"--config-file", dbSide.conf, "claims", "heal"}, st.args...)...)
		aOut, aErr, aCode := rpctl(t, append([]string{"--config-file", apiConf, "--os-endpoint", apiSide.url, "--os-token", "admin", "claims", "heal"}, st.args...)...)
		if dCode != st.want || aCode != st.want {
			t.Errorf("%s: exit code database %d, API %d, nova-manage's %d\ndatabase:\n%s%s\nAPI:\n%s%s", st.name, dCode, aCode, st.want, dOut, dErr, aOut, aErr)
		}
		if dOut != aOut {
			t.Errorf("%s: output differs\ndatabase:\n%s\nAPI:\n%s", st.name, dOut, aOut)
		}
		compare(st.name)
		for _, in := range st.add {
			for _, db := range []*storage.DB{dbCell, apiCell} {
				if _, err := db.ExecContext(ctx, `UPDATE instances SET deleted = id, deleted_at = NOW() WHERE uuid = ?`, in.UUID); err != nil {
					t.Fatal(err)
				}
			}
			consumers = append(consumers, in.UUID)
		}
		if t.Failed() {
			return
		}
	}
}

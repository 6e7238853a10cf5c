package migrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rpctl/rpctl/migrate"
)

type fakeUUIDCell struct {
	migrations, bdms, devs map[int64]string // id -> uuid ("" NULL)
}

func (c *fakeUUIDCell) Name() string { return "cell1" }

func nullIDs(rows map[int64]string, limit int) []int64 {
	var ids []int64
	for id := int64(1); id <= int64(len(rows)); id++ {
		if rows[id] == "" && len(ids) < limit {
			ids = append(ids, id)
		}
	}
	return ids
}

func (c *fakeUUIDCell) MigrationsWithoutUUID(_ context.Context, limit int) ([]int64, error) {
	return nullIDs(c.migrations, limit), nil
}

func (c *fakeUUIDCell) BDMsWithoutUUID(_ context.Context, limit int) ([]int64, error) {
	return nullIDs(c.bdms, limit), nil
}

func setIDs(rows map[int64]string, uuids map[int64]string) int {
	for id, u := range uuids {
		rows[id] = u
	}
	return len(uuids)
}

func (c *fakeUUIDCell) PCIDevicesWithoutUUID(_ context.Context, limit int) ([]int64, error) {
	return nullIDs(c.devs, limit), nil
}

func (c *fakeUUIDCell) SetPCIDeviceUUIDs(_ context.Context, uuids map[int64]string, _ time.Time) (int, error) {
	return setIDs(c.devs, uuids), nil
}

func (c *fakeUUIDCell) SetMigrationUUIDs(_ context.Context, uuids map[int64]string, _ time.Time) (int, error) {
	return setIDs(c.migrations, uuids), nil
}

func (c *fakeUUIDCell) SetBDMUUIDs(_ context.Context, uuids map[int64]string, _ time.Time) (int, error) {
	return setIDs(c.bdms, uuids), nil
}

func TestFillUUIDs(t *testing.T) {
	c := &fakeUUIDCell{migrations: map[int64]string{1: "", 2: "kept", 3: ""}, bdms: map[int64]string{1: "", 2: ""}, devs: map[int64]string{1: ""}}
	mig := &migrate.FillUUIDs{Cells: []migrate.UUIDCell{c}}
	bdm := &migrate.FillUUIDs{Table: migrate.BDMTable, Cells: []migrate.UUIDCell{c}}
	dev := &migrate.FillUUIDs{Table: migrate.PCIDevicesTable, Cells: []migrate.UUIDCell{c}}
	if mig.Name() != "migration_migrate_to_uuid" || bdm.Name() != "populate_uuids" || dev.Name() != "populate_dev_uuids" {
		t.Fatalf("names %s, %s", mig.Name(), bdm.Name())
	}
	if found, done, err := mig.Run(context.Background(), 1); err != nil || found != 1 || done != 1 {
		t.Fatalf("Run(1) = %d, %d, %v", found, done, err)
	}
	if found, done, err := mig.Run(context.Background(), 50); err != nil || found != 1 || done != 1 {
		t.Fatalf("Run(50) = %d, %d, %v", found, done, err)
	}
	if found, done, err := bdm.Run(context.Background(), 50); err != nil || found != 2 || done != 2 {
		t.Fatalf("bdm Run(50) = %d, %d, %v", found, done, err)
	}
	if found, done, err := dev.Run(context.Background(), 50); err != nil || found != 1 || done != 1 {
		t.Fatalf("dev Run(50) = %d, %d, %v", found, done, err)
	}
	for _, rows := range []map[int64]string{c.migrations, c.bdms, c.devs} {
		for id, u := range rows {
			if u == "kept" {
				continue
			}
			if p, err := uuid.Parse(u); err != nil || p.Version() != 4 {
				t.Errorf("row %d: uuid %q, want a random (version 4) uuid", id, u)
			}
		}
	}
	if c.migrations[2] != "kept" {
		t.Errorf("a row's own uuid was replaced: %q", c.migrations[2])
	}
}

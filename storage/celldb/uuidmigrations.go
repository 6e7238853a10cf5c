package celldb

import (
	"context"
	"time"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

var _ migrate.UUIDCell = (*Cell)(nil)

// MigrationsWithoutUUID implements migrate.UUIDCell.
func (c *Cell) MigrationsWithoutUUID(ctx context.Context, limit int) ([]int64, error) {
	return c.nullUUIDs(ctx, `SELECT id FROM migrations WHERE uuid IS NULL AND deleted = 0 LIMIT ?`, limit)
}

// BDMsWithoutUUID implements migrate.UUIDCell. rpctl's own schema (the
// embedded file, rpctl init) has no block_device_mapping table: no rows.
func (c *Cell) BDMsWithoutUUID(ctx context.Context, limit int) ([]int64, error) {
	if ok, err := c.DB.TableExists(ctx, "block_device_mapping"); err != nil || !ok {
		return nil, err
	}
	return c.nullUUIDs(ctx, `SELECT id FROM block_device_mapping WHERE uuid IS NULL LIMIT ?`, limit)
}

// PCIDevicesWithoutUUID implements migrate.UUIDCell.
func (c *Cell) PCIDevicesWithoutUUID(ctx context.Context, limit int) ([]int64, error) {
	return c.nullUUIDs(ctx, `SELECT id FROM pci_devices WHERE uuid IS NULL LIMIT ?`, limit)
}

func (c *Cell) nullUUIDs(ctx context.Context, q string, limit int) ([]int64, error) {
	var ids []int64
	if err := c.DB.SelectContext(ctx, &ids, c.DB.Rebind(q), limit); err != nil {
		return nil, c.DB.Errorf("%s: %w", q[:min(len(q), 40)], storage.CleanError(err))
	}
	return ids, nil
}

// SetMigrationUUIDs implements migrate.UUIDCell.
func (c *Cell) SetMigrationUUIDs(ctx context.Context, uuids map[int64]string, now time.Time) (int, error) {
	return c.setUUIDs(ctx, `UPDATE migrations SET uuid = ?, updated_at = ? WHERE id = ? AND uuid IS NULL`, uuids, now)
}

// SetBDMUUIDs implements migrate.UUIDCell.
func (c *Cell) SetBDMUUIDs(ctx context.Context, uuids map[int64]string, now time.Time) (int, error) {
	return c.setUUIDs(ctx, `UPDATE block_device_mapping SET uuid = ?, updated_at = ? WHERE id = ? AND uuid IS NULL`, uuids, now)
}

// SetPCIDeviceUUIDs implements migrate.UUIDCell.
func (c *Cell) SetPCIDeviceUUIDs(ctx context.Context, uuids map[int64]string, now time.Time) (int, error) {
	return c.setUUIDs(ctx, `UPDATE pci_devices SET uuid = ?, updated_at = ? WHERE id = ? AND uuid IS NULL`, uuids, now)
}

// setUUIDs runs q (uuid, updated_at, id) for each row in one transaction.
func (c *Cell) setUUIDs(ctx context.Context, q string, uuids map[int64]string, now time.Time) (int, error) {
	return storage.UpdateEach(ctx, c.DB, q, q[:min(len(q), 40)], uuids, now)
}

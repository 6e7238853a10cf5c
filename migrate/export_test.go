package migrate

import "github.com/rpctl/rpctl/inventory"

// Exported for the external tests (package migrate_test), which need the
// storage packages and so cannot live inside this package.

// CanonicalUUID is the uuid form a provider may take.
var CanonicalUUID = canonicalUUID

// SortedKeys is sortedKeys for the tests.
func SortedKeys[V any](m map[string]V) []string { return sortedKeys(m) }

// Ratio exposes ratio to the tests.
func (c *InventoryConfig) Ratio(d DesiredInventory, existing *inventory.Inventory) float64 {
	return c.ratio(d, existing)
}

package novaformats

// Test hooks for the fast NUMATopology reader.
var (
	FastNUMAForTest    = fastNUMA
	GeneralNUMAForTest = parseNUMAGeneral
)

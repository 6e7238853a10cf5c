package novaformats

// Test hooks for the one-pass NUMATopology and PciDevicePoolList readers.
var (
	FastNUMAForTest    = fastNUMA
	ParseNUMAForTest   = parseNUMA
	GeneralNUMAForTest = parseNUMAGeneral
	FastPCIForTest     = fastPCI
	GeneralPCIForTest  = parsePCIGeneral
)

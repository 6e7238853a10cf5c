package nova

// CellRows are rows for one cell database.
type CellRows struct {
	Services     []Service
	ComputeNodes []ComputeNode
	Instances    []Instance // written to instances and instance_extra
	Migrations   []Migration
	// Replace deletes every row of those tables first (instance_extra and
	// migrations included), in the same transaction.
	Replace bool
	// Shape is which columns the cell schema's release has beyond Zed's.
	Shape RowShape
}

// RowShape says which columns of a release's cell rows exist beyond
// Zed's (the releases' own tables: samplecloud.RowShapeOf).
type RowShape struct {
	// ComputeIDs: instances.compute_id and migrations.dest_compute_id
	// (Nova 28, 2023.2: migration 1acf2c98e646_add_compute_id_to_instance).
	ComputeIDs bool
}

// APIRows are rows for the Nova API database.
type APIRows struct {
	CellMappings     []CellMapping
	HostMappings     []HostMapping
	Flavors          []Flavor // written to flavors and flavor_extra_specs
	InstanceMappings []InstanceMapping
	Aggregates       []Aggregate // with their hosts and metadata
	// Replace deletes every host mapping, instance mapping, flavor, extra
	// spec and aggregate first (cell mappings are kept: they may be how rpctl found the
	// cells).
	Replace bool
}

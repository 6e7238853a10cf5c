// Package nova holds the rows of Nova's legacy databases as Go values: the
// cell database's compute_nodes, services, instances (with instance_extra),
// migrations, and the API database's cell_mappings, host_mappings and
// flavors. Columns that Nova's schema allows to be NULL are pointers, because
// for several of them (uuid, the allocation ratios) NULL means something
// different from any value. The storage package reads and writes these.
package nova

import "time"

// Soft deletion follows oslo.db's SoftDeleteMixin: a live row has deleted = 0
// and deleted_at NULL; soft_delete() sets deleted = the row's own id and
// deleted_at = now, so that unique keys that include "deleted" let a new live
// row reuse the host name of a deleted one.

// ComputeNode is one row of a cell database's compute_nodes table, every
// column of Nova 26's schema.
type ComputeNode struct {
	ID        int64      `json:"id"`
	CreatedAt *time.Time `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	DeletedAt *time.Time `json:"deleted_at"`
	// Deleted is 0 for a live row, else the row's id; a NULL (which Nova
	// never writes) reads as 0.
	Deleted   int64  `json:"deleted"`
	ServiceID *int64 `json:"service_id"`
	// Host is NULL only for rows reported by Juno-era computes.
	Host               *string `json:"host"`
	HypervisorHostname *string `json:"hypervisor_hostname"`
	// UUID is NULL on rows that Mitaka's online migration never reached; it
	// becomes the resource provider's uuid.
	UUID *string `json:"uuid"`

	VCPUs        int64 `json:"vcpus"`
	MemoryMB     int64 `json:"memory_mb"`
	LocalGB      int64 `json:"local_gb"`
	VCPUsUsed    int64 `json:"vcpus_used"`
	MemoryMBUsed int64 `json:"memory_mb_used"`
	LocalGBUsed  int64 `json:"local_gb_used"`

	HypervisorType    string `json:"hypervisor_type"`
	HypervisorVersion int64  `json:"hypervisor_version"`
	CPUInfo           string `json:"cpu_info"`

	DiskAvailableLeast *int64  `json:"disk_available_least"`
	FreeRAMMB          *int64  `json:"free_ram_mb"`
	FreeDiskGB         *int64  `json:"free_disk_gb"`
	CurrentWorkload    *int64  `json:"current_workload"`
	RunningVMs         *int64  `json:"running_vms"`
	HostIP             *string `json:"host_ip"`

	// JSON blobs, kept as stored: their format depends on the Nova release
	// that wrote them, and parsing them is the migration's business.
	SupportedInstances *string `json:"supported_instances"`
	PCIStats           *string `json:"pci_stats"`
	Metrics            *string `json:"metrics"`
	ExtraResources     *string `json:"extra_resources"`
	Stats              *string `json:"stats"`
	NUMATopology       *string `json:"numa_topology"`

	// Allocation ratios: NULL and 0.0 both mean "not set" to Nova since
	// Stein (migrate_empty_ratio), but rpctl reports them apart.
	RAMAllocationRatio  *float64 `json:"ram_allocation_ratio"`
	CPUAllocationRatio  *float64 `json:"cpu_allocation_ratio"`
	DiskAllocationRatio *float64 `json:"disk_allocation_ratio"`

	// Mapped is 1 once nova-manage cell_v2 discover_hosts created the host's
	// host mapping.
	Mapped *int64 `json:"mapped"`
}

// IsDeleted reports whether the row is soft-deleted.
func (c *ComputeNode) IsDeleted() bool { return c.Deleted != 0 }

// Service is one row of a cell database's services table.
type Service struct {
	ID             int64      `json:"id"`
	CreatedAt      *time.Time `json:"created_at"`
	UpdatedAt      *time.Time `json:"updated_at"`
	DeletedAt      *time.Time `json:"deleted_at"`
	Deleted        int64      `json:"deleted"`
	UUID           *string    `json:"uuid"`
	Host           *string    `json:"host"`
	Binary         *string    `json:"binary"` // nova-compute, nova-conductor, nova-osapi_compute, ...
	Topic          *string    `json:"topic"`  // NULL for the API services
	ReportCount    int64      `json:"report_count"`
	Disabled       bool       `json:"disabled"`
	DisabledReason *string    `json:"disabled_reason"`
	LastSeenUp     *time.Time `json:"last_seen_up"`
	ForcedDown     bool       `json:"forced_down"`
	// Version is nova.objects.service.SERVICE_VERSION of the code that last
	// started the service; upgrade checks compare minimums of it.
	Version int64 `json:"version"`
}

// Instance is one row of instances together with the instance_extra columns
// rpctl cares about.
type Instance struct {
	ID               int64      `json:"id"`
	UUID             string     `json:"uuid"`
	CreatedAt        *time.Time `json:"created_at"`
	UpdatedAt        *time.Time `json:"updated_at"`
	DeletedAt        *time.Time `json:"deleted_at"`
	Deleted          int64      `json:"deleted"`
	UserID           string     `json:"user_id"`
	ProjectID        string     `json:"project_id"`
	ImageRef         string     `json:"image_ref"`
	Hostname         string     `json:"hostname"`
	DisplayName      string     `json:"display_name"`
	Host             *string    `json:"host"`
	Node             *string    `json:"node"` // the compute node's hypervisor_hostname
	LaunchedOn       *string    `json:"launched_on"`
	AvailabilityZone *string    `json:"availability_zone"`
	VMState          string     `json:"vm_state"`
	TaskState        *string    `json:"task_state"`
	PowerState       int64      `json:"power_state"`
	LaunchedAt       *time.Time `json:"launched_at"`
	InstanceTypeID   int64      `json:"instance_type_id"` // the API database's flavors.id
	MemoryMB         int64      `json:"memory_mb"`
	VCPUs            int64      `json:"vcpus"`
	RootGB           int64      `json:"root_gb"`
	EphemeralGB      int64      `json:"ephemeral_gb"`
	// Flavor is instance_extra.flavor: {"cur": <Flavor primitive>, "old":
	// ..., "new": ...}, the authoritative copy since Liberty.
	Flavor *string `json:"flavor"`
	// ExtraNUMATopology and PCIRequests are instance_extra.numa_topology
	// and pci_requests.
	ExtraNUMATopology *string `json:"extra_numa_topology"`
	PCIRequests       *string `json:"pci_requests"`
	// ComputeID is instances.compute_id (2023.2 on): the id of the
	// compute node the instance is on (Node), nil in older releases.
	ComputeID *int64 `json:"compute_id,omitempty"`
}

// Migration is one row of a cell database's migrations table.
type Migration struct {
	ID                int64      `json:"id"`
	UUID              string     `json:"uuid"`
	CreatedAt         *time.Time `json:"created_at"`
	UpdatedAt         *time.Time `json:"updated_at"`
	DeletedAt         *time.Time `json:"deleted_at"`
	Deleted           int64      `json:"deleted"`
	SourceCompute     string     `json:"source_compute"`
	DestCompute       string     `json:"dest_compute"`
	DestHost          *string    `json:"dest_host"`
	SourceNode        string     `json:"source_node"`
	DestNode          string     `json:"dest_node"`
	Status            string     `json:"status"`
	InstanceUUID      string     `json:"instance_uuid"`
	OldInstanceTypeID int64      `json:"old_instance_type_id"`
	NewInstanceTypeID int64      `json:"new_instance_type_id"`
	MigrationType     string     `json:"migration_type"` // migration, resize, live-migration, evacuation
	Hidden            bool       `json:"hidden"`
	CrossCellMove     bool       `json:"cross_cell_move"`
	UserID            *string    `json:"user_id"`
	ProjectID         *string    `json:"project_id"`
	// DestComputeID is migrations.dest_compute_id (2023.2 on): the id of
	// the destination compute node (DestNode), nil in older releases.
	DestComputeID *int64 `json:"dest_compute_id,omitempty"`
}

// CellMapping is one row of the API database's cell_mappings.
type CellMapping struct {
	ID                 int64      `json:"id"`
	UUID               string     `json:"uuid"`
	Name               string     `json:"name"`
	TransportURL       string     `json:"transport_url"`
	DatabaseConnection string     `json:"database_connection"`
	Disabled           bool       `json:"disabled"`
	CreatedAt          *time.Time `json:"created_at"`
}

// Cell0UUID is the fixed uuid of cell0, which holds instances that failed to
// schedule and never has compute nodes.
const Cell0UUID = "00000000-0000-0000-0000-000000000000"

// HostMapping is one row of the API database's host_mappings: which cell a
// compute host's nodes live in.
type HostMapping struct {
	ID        int64      `json:"id"`
	CellID    int64      `json:"cell_id"`
	Host      string     `json:"host"`
	CreatedAt *time.Time `json:"created_at"`
}

// InstanceMapping is one row of the API database's instance_mappings: which
// cell an instance lives in (nova-manage --instance options look it up).
type InstanceMapping struct {
	InstanceUUID string     `json:"instance_uuid"`
	CellID       *int64     `json:"cell_id"`
	ProjectID    string     `json:"project_id"`
	UserID       *string    `json:"user_id"`
	CreatedAt    *time.Time `json:"created_at"`
}

// Flavor is one row of the API database's flavors with its extra specs.
type Flavor struct {
	ID          int64             `json:"id"`
	FlavorID    string            `json:"flavorid"`
	Name        string            `json:"name"`
	MemoryMB    int64             `json:"memory_mb"`
	VCPUs       int64             `json:"vcpus"`
	RootGB      int64             `json:"root_gb"`
	EphemeralGB int64             `json:"ephemeral_gb"`
	Swap        int64             `json:"swap"` // MiB
	RxtxFactor  float64           `json:"rxtx_factor"`
	VCPUWeight  *int64            `json:"vcpu_weight"`
	Disabled    bool              `json:"disabled"`
	IsPublic    bool              `json:"is_public"`
	Description *string           `json:"description"`
	ExtraSpecs  map[string]string `json:"extra_specs"`
	CreatedAt   *time.Time        `json:"created_at"`
}

// Aggregate is one host aggregate of the API database (aggregates, with its
// aggregate_hosts and aggregate_metadata rows). Nova mirrors its UUID into
// Placement as a provider aggregate.
type Aggregate struct {
	ID   int64  `json:"id"`
	UUID string `json:"uuid"`
	Name string `json:"name"`
	// Hosts are compute service hosts (compute_nodes.host), in
	// aggregate_hosts id order.
	Hosts     []string          `json:"hosts"`
	Metadata  map[string]string `json:"metadata"`
	CreatedAt *time.Time        `json:"created_at"`
}

// PCIDevice is one row of a cell database's pci_devices table, with the
// columns Nova's PCI Placement report reads (nova/db/main/models.py
// PciDevice). Every live row is a device, whatever its status; pci_stats
// counts only the free ones.
type PCIDevice struct {
	ID            int64   `json:"id"`
	ComputeNodeID int64   `json:"compute_node_id"`
	Address       string  `json:"address"` // domain:bus:slot.func, "0000:81:00.1"
	VendorID      string  `json:"vendor_id"`
	ProductID     string  `json:"product_id"`
	DevType       string  `json:"dev_type"` // type-PCI, type-PF, type-VF, vdpa
	Status        string  `json:"status"`   // available, claimed, allocated, unavailable, removed, deleted, ...
	InstanceUUID  *string `json:"instance_uuid"`
	NUMANode      *int64  `json:"numa_node"`
	ParentAddr    *string `json:"parent_addr"` // a VF's PF
}

-- The cell schema of 2023.1 (nova 27.0.0; openstack-placement 9.0.0) for the tables rpctl holds: Zed's dump (nova 26.2.2) with Nova 27's only cell migration that touches them, 960aac0e09ea (instances' duplicate `uuid` index dropped). Not written by scripts/dump-reference-schema.sh: TestMySQLSchemaMatchesRealDBSyncRulesOnly compares it with Nova's own migrations run to that head.

CREATE TABLE services (
	created_at DATETIME, 
	updated_at DATETIME, 
	deleted_at DATETIME, 
	id INTEGER NOT NULL, 
	host VARCHAR(255), 
	binary VARCHAR(255), 
	topic VARCHAR(255), 
	report_count INTEGER NOT NULL, 
	disabled BOOLEAN, 
	deleted INTEGER, 
	disabled_reason VARCHAR(255), 
	last_seen_up DATETIME, 
	forced_down BOOLEAN, 
	version INTEGER, 
	uuid VARCHAR(36), 
	PRIMARY KEY (id), 
	CONSTRAINT uniq_services0host0topic0deleted UNIQUE (host, topic, deleted), 
	CONSTRAINT uniq_services0host0binary0deleted UNIQUE (host, binary, deleted)
);
CREATE UNIQUE INDEX services_uuid_idx ON services (uuid);

CREATE TABLE compute_nodes (
	created_at DATETIME, 
	updated_at DATETIME, 
	deleted_at DATETIME, 
	id INTEGER NOT NULL, 
	service_id INTEGER, 
	vcpus INTEGER NOT NULL, 
	memory_mb INTEGER NOT NULL, 
	local_gb INTEGER NOT NULL, 
	vcpus_used INTEGER NOT NULL, 
	memory_mb_used INTEGER NOT NULL, 
	local_gb_used INTEGER NOT NULL, 
	hypervisor_type TEXT NOT NULL, 
	hypervisor_version INTEGER NOT NULL, 
	cpu_info TEXT NOT NULL, 
	disk_available_least INTEGER, 
	free_ram_mb INTEGER, 
	free_disk_gb INTEGER, 
	current_workload INTEGER, 
	running_vms INTEGER, 
	hypervisor_hostname VARCHAR(255), 
	deleted INTEGER, 
	host_ip VARCHAR(39), 
	supported_instances TEXT, 
	pci_stats TEXT, 
	metrics TEXT, 
	extra_resources TEXT, 
	stats TEXT, 
	numa_topology TEXT, 
	host VARCHAR(255), 
	ram_allocation_ratio FLOAT, 
	cpu_allocation_ratio FLOAT, 
	uuid VARCHAR(36), 
	disk_allocation_ratio FLOAT, 
	mapped INTEGER, 
	PRIMARY KEY (id), 
	CONSTRAINT uniq_compute_nodes0host0hypervisor_hostname0deleted UNIQUE (host, hypervisor_hostname, deleted)
);
CREATE UNIQUE INDEX compute_nodes_uuid_idx ON compute_nodes (uuid);

CREATE TABLE instances (
	created_at DATETIME, 
	updated_at DATETIME, 
	deleted_at DATETIME, 
	id INTEGER NOT NULL, 
	internal_id INTEGER, 
	user_id VARCHAR(255), 
	project_id VARCHAR(255), 
	image_ref VARCHAR(255), 
	kernel_id VARCHAR(255), 
	ramdisk_id VARCHAR(255), 
	launch_index INTEGER, 
	key_name VARCHAR(255), 
	key_data TEXT, 
	power_state INTEGER, 
	vm_state VARCHAR(255), 
	memory_mb INTEGER, 
	vcpus INTEGER, 
	hostname VARCHAR(255), 
	host VARCHAR(255), 
	user_data TEXT, 
	reservation_id VARCHAR(255), 
	launched_at DATETIME, 
	terminated_at DATETIME, 
	display_name VARCHAR(255), 
	display_description VARCHAR(255), 
	availability_zone VARCHAR(255), 
	locked BOOLEAN, 
	os_type VARCHAR(255), 
	launched_on TEXT, 
	instance_type_id INTEGER, 
	vm_mode VARCHAR(255), 
	uuid VARCHAR(36) NOT NULL, 
	architecture VARCHAR(255), 
	root_device_name VARCHAR(255), 
	access_ip_v4 VARCHAR(39), 
	access_ip_v6 VARCHAR(39), 
	config_drive VARCHAR(255), 
	task_state VARCHAR(255), 
	default_ephemeral_device VARCHAR(255), 
	default_swap_device VARCHAR(255), 
	progress INTEGER, 
	auto_disk_config BOOLEAN, 
	shutdown_terminate BOOLEAN, 
	disable_terminate BOOLEAN, 
	root_gb INTEGER, 
	ephemeral_gb INTEGER, 
	cell_name VARCHAR(255), 
	node VARCHAR(255), 
	deleted INTEGER, 
	locked_by VARCHAR(5), 
	cleaned INTEGER, 
	ephemeral_key_uuid VARCHAR(36), 
	hidden BOOLEAN, 
	PRIMARY KEY (id), 
	CONSTRAINT uniq_instances0uuid UNIQUE (uuid)
);
CREATE INDEX instances_deleted_created_at_idx ON instances (deleted, created_at);
CREATE INDEX instances_host_deleted_cleaned_idx ON instances (host, deleted, cleaned);
CREATE INDEX instances_host_node_deleted_idx ON instances (host, node, deleted);
CREATE INDEX instances_project_id_deleted_idx ON instances (project_id, deleted);
CREATE INDEX instances_project_id_idx ON instances (project_id);
CREATE INDEX instances_reservation_id_idx ON instances (reservation_id);
CREATE INDEX instances_task_state_updated_at_idx ON instances (task_state, updated_at);
CREATE INDEX instances_terminated_at_launched_at_idx ON instances (terminated_at, launched_at);
CREATE INDEX instances_updated_at_project_id_idx ON instances (updated_at, project_id);
CREATE INDEX instances_uuid_deleted_idx ON instances (uuid, deleted);

CREATE TABLE instance_extra (
	created_at DATETIME, 
	updated_at DATETIME, 
	deleted_at DATETIME, 
	deleted INTEGER, 
	id INTEGER NOT NULL, 
	instance_uuid VARCHAR(36) NOT NULL, 
	numa_topology TEXT, 
	pci_requests TEXT, 
	flavor TEXT, 
	vcpu_model TEXT, 
	migration_context TEXT, 
	keypairs TEXT, 
	device_metadata TEXT, 
	trusted_certs TEXT, 
	vpmems TEXT, 
	resources TEXT, 
	PRIMARY KEY (id), 
	CONSTRAINT instance_extra_instance_uuid_fkey FOREIGN KEY(instance_uuid) REFERENCES instances (uuid)
);
CREATE INDEX instance_extra_idx ON instance_extra (instance_uuid);

CREATE TABLE migrations (
	created_at DATETIME, 
	updated_at DATETIME, 
	deleted_at DATETIME, 
	id INTEGER NOT NULL, 
	source_compute VARCHAR(255), 
	dest_compute VARCHAR(255), 
	dest_host VARCHAR(255), 
	status VARCHAR(255), 
	instance_uuid VARCHAR(36), 
	old_instance_type_id INTEGER, 
	new_instance_type_id INTEGER, 
	source_node VARCHAR(255), 
	dest_node VARCHAR(255), 
	deleted INTEGER, 
	migration_type VARCHAR(14), 
	hidden BOOLEAN, 
	memory_total BIGINT, 
	memory_processed BIGINT, 
	memory_remaining BIGINT, 
	disk_total BIGINT, 
	disk_processed BIGINT, 
	disk_remaining BIGINT, 
	uuid VARCHAR(36), 
	cross_cell_move BOOLEAN, 
	user_id VARCHAR(255), 
	project_id VARCHAR(255), 
	PRIMARY KEY (id), 
	CONSTRAINT fk_migrations_instance_uuid FOREIGN KEY(instance_uuid) REFERENCES instances (uuid)
);
CREATE INDEX migrations_by_host_nodes_and_status_idx ON migrations (deleted, source_compute, dest_compute, source_node, dest_node, status);
CREATE INDEX migrations_instance_uuid_and_status_idx ON migrations (deleted, instance_uuid, status);
CREATE INDEX migrations_updated_at_idx ON migrations (updated_at);
CREATE UNIQUE INDEX migrations_uuid ON migrations (uuid);

CREATE TABLE pci_devices (
	created_at DATETIME, 
	updated_at DATETIME, 
	deleted_at DATETIME, 
	deleted INTEGER, 
	id INTEGER NOT NULL, 
	compute_node_id INTEGER NOT NULL, 
	address VARCHAR(12) NOT NULL, 
	product_id VARCHAR(4) NOT NULL, 
	vendor_id VARCHAR(4) NOT NULL, 
	dev_type VARCHAR(8) NOT NULL, 
	dev_id VARCHAR(255), 
	label VARCHAR(255) NOT NULL, 
	status VARCHAR(36) NOT NULL, 
	extra_info TEXT, 
	instance_uuid VARCHAR(36), 
	request_id VARCHAR(36), 
	numa_node INTEGER, 
	parent_addr VARCHAR(12), 
	uuid VARCHAR(36), 
	PRIMARY KEY (id), 
	CONSTRAINT uniq_pci_devices0compute_node_id0address0deleted UNIQUE (compute_node_id, address, deleted), 
	CONSTRAINT pci_devices_compute_node_id_fkey FOREIGN KEY(compute_node_id) REFERENCES compute_nodes (id)
);
CREATE INDEX ix_pci_devices_compute_node_id_deleted ON pci_devices (compute_node_id, deleted);
CREATE INDEX ix_pci_devices_compute_node_id_parent_addr_deleted ON pci_devices (compute_node_id, parent_addr, deleted);
CREATE INDEX ix_pci_devices_instance_uuid_deleted ON pci_devices (instance_uuid, deleted);

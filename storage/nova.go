package storage

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/internal/nova"
)

// maxPlaceholders bounds one INSERT's bound parameters: SQLite's default
// SQLITE_MAX_VARIABLE_NUMBER is 32766 and MySQL's prepared-statement limit
// 65535. maxBatchRows is what measured best: 100,000 realistic compute nodes
// (230 MB of NUMA JSON) went into MariaDB 10.11 in 14 s with 100-row batches
// against 24 s with 500-row ones.
const (
	maxPlaceholders = 30000
	maxBatchRows    = 100
)

// inserter writes rows of one table in multi-row INSERTs. A statement for a
// full batch is prepared once and reused, since go-sql-driver otherwise
// prepares, executes and closes it for every call: three round trips each.
type inserter struct {
	db    *DB
	tx    *sqlx.Tx
	table string
	cols  []string
	rows  int // rows per full batch
	full  *sql.Stmt
	args  []any
	n     int // rows buffered in args
}

func newInserter(db *DB, tx *sqlx.Tx, table string, cols ...string) *inserter {
	rows := min(maxBatchRows, maxPlaceholders/len(cols))
	return &inserter{db: db, tx: tx, table: table, cols: cols, rows: rows, args: make([]any, 0, rows*len(cols))}
}

func (w *inserter) query(rows int) string {
	var b strings.Builder
	quoted := make([]string, len(w.cols))
	for i, c := range w.cols {
		// Backticks quote in both MySQL and SQLite; services.binary and
		// flavor_extra_specs.key are reserved words in MySQL.
		quoted[i] = "`" + c + "`"
	}
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", w.table, strings.Join(quoted, ", "))
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(w.cols)), ", ") + ")"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return w.db.Rebind(b.String())
}

// add buffers one row; its values must be in column order.
func (w *inserter) add(ctx context.Context, vals ...any) error {
	if len(vals) != len(w.cols) {
		panic(fmt.Sprintf("insert into %s: %d values for %d columns", w.table, len(vals), len(w.cols)))
	}
	w.args = append(w.args, vals...)
	w.n++
	if w.n < w.rows {
		return nil
	}
	if w.full == nil {
		st, err := w.tx.PrepareContext(ctx, w.query(w.rows))
		if err != nil {
			return w.db.Errorf("insert into %s: %w", w.table, CleanError(err))
		}
		w.full = st
	}
	if _, err := w.full.ExecContext(ctx, w.args...); err != nil {
		return w.db.Errorf("insert into %s: %w", w.table, CleanError(err))
	}
	w.args, w.n = w.args[:0], 0
	return nil
}

// flush writes the rows still buffered and releases the statement.
func (w *inserter) flush(ctx context.Context) error {
	if w.full != nil {
		defer w.full.Close()
	}
	if w.n == 0 {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, w.query(w.n), w.args...); err != nil {
		return w.db.Errorf("insert into %s: %w", w.table, CleanError(err))
	}
	w.args, w.n = w.args[:0], 0
	return nil
}

// timeArg binds a datetime. SQLite gets the text SQLAlchemy writes
// ("2006-01-02 15:04:05.000000"), so that rows rpctl writes and rows Nova
// writes into a SQLite database read back the same way.
func (db *DB) timeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	u := t.UTC()
	if db.IsMySQL() {
		return u
	}
	return u.Format("2006-01-02 15:04:05.000000")
}

// ptr dereferences optional values into driver arguments (nil for NULL).
func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// CellRows are rows for one cell database.
type CellRows struct {
	Services     []nova.Service
	ComputeNodes []nova.ComputeNode
	Instances    []nova.Instance // written to instances and instance_extra
	Migrations   []nova.Migration
	// Replace deletes every row of those tables first (instance_extra and
	// migrations included), in the same transaction.
	Replace bool
}

// insertAll writes rows into table through one inserter; vals gives a row's
// values in the order of cols.
func insertAll[T any](ctx context.Context, db *DB, tx *sqlx.Tx, table string, cols []string, rows []T, vals func(*T) []any) error {
	w := newInserter(db, tx, table, cols...)
	for i := range rows {
		if err := w.add(ctx, vals(&rows[i])...); err != nil {
			return err
		}
	}
	return w.flush(ctx)
}

// clearTables deletes every row of tables, in their order.
func clearTables(ctx context.Context, db *DB, tx *sqlx.Tx, tables ...string) error {
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t); err != nil {
			return db.Errorf("clear %s: %w", t, CleanError(err))
		}
	}
	return nil
}

// InsertCellRows writes rows into a cell database in one transaction, with
// their ids as given so that compute_nodes.service_id and the instances'
// hosts stay consistent.
func InsertCellRows(ctx context.Context, db *DB, r CellRows) error {
	return db.Tx(ctx, func(tx *sqlx.Tx) error {
		if r.Replace {
			// Children first, so that the foreign keys hold.
			if err := clearTables(ctx, db, tx, "instance_extra", "migrations", "instances", "compute_nodes", "services"); err != nil {
				return err
			}
		}
		if err := insertAll(ctx, db, tx, "services", serviceCols, r.Services, func(s *nova.Service) []any {
			return []any{s.ID, db.timeArg(s.CreatedAt), db.timeArg(s.UpdatedAt), db.timeArg(s.DeletedAt), s.Deleted, ptr(s.UUID),
				ptr(s.Host), ptr(s.Binary), ptr(s.Topic), s.ReportCount, s.Disabled, ptr(s.DisabledReason),
				db.timeArg(s.LastSeenUp), s.ForcedDown, s.Version}
		}); err != nil {
			return err
		}
		if err := insertAll(ctx, db, tx, "compute_nodes", computeNodeCols, r.ComputeNodes, func(n *nova.ComputeNode) []any {
			return []any{n.ID, db.timeArg(n.CreatedAt), db.timeArg(n.UpdatedAt), db.timeArg(n.DeletedAt), n.Deleted,
				ptr(n.ServiceID), ptr(n.Host), ptr(n.HypervisorHostname), ptr(n.UUID),
				n.VCPUs, n.MemoryMB, n.LocalGB, n.VCPUsUsed, n.MemoryMBUsed, n.LocalGBUsed,
				n.HypervisorType, n.HypervisorVersion, n.CPUInfo,
				ptr(n.DiskAvailableLeast), ptr(n.FreeRAMMB), ptr(n.FreeDiskGB), ptr(n.CurrentWorkload), ptr(n.RunningVMs), ptr(n.HostIP),
				ptr(n.SupportedInstances), ptr(n.PCIStats), ptr(n.Metrics), ptr(n.ExtraResources), ptr(n.Stats), ptr(n.NUMATopology),
				ptr(n.RAMAllocationRatio), ptr(n.CPUAllocationRatio), ptr(n.DiskAllocationRatio), ptr(n.Mapped)}
		}); err != nil {
			return err
		}
		if err := insertAll(ctx, db, tx, "instances", instanceCols, r.Instances, func(in *nova.Instance) []any {
			return []any{in.ID, in.UUID, db.timeArg(in.CreatedAt), db.timeArg(in.UpdatedAt), db.timeArg(in.DeletedAt), in.Deleted,
				in.UserID, in.ProjectID, in.ImageRef, in.Hostname, in.DisplayName, ptr(in.Host), ptr(in.Node), ptr(in.LaunchedOn),
				ptr(in.AvailabilityZone), in.VMState, ptr(in.TaskState), in.PowerState, db.timeArg(in.LaunchedAt), in.InstanceTypeID,
				in.MemoryMB, in.VCPUs, in.RootGB, in.EphemeralGB,
				0, false, false, 0, false, false, fmt.Sprintf("r-%08x", uint32(in.ID))}
		}); err != nil {
			return err
		}
		if err := insertAll(ctx, db, tx, "instance_extra", instanceExtraCols, r.Instances, func(in *nova.Instance) []any {
			return []any{in.ID, db.timeArg(in.CreatedAt), db.timeArg(in.UpdatedAt), db.timeArg(in.DeletedAt), in.Deleted, in.UUID,
				ptr(in.Flavor), ptr(in.ExtraNUMATopology), ptr(in.PCIRequests)}
		}); err != nil {
			return err
		}
		return insertAll(ctx, db, tx, "migrations", migrationCols, r.Migrations, func(m *nova.Migration) []any {
			return []any{m.ID, m.UUID, db.timeArg(m.CreatedAt), db.timeArg(m.UpdatedAt), db.timeArg(m.DeletedAt), m.Deleted,
				m.SourceCompute, m.DestCompute, ptr(m.DestHost), m.SourceNode, m.DestNode, m.Status, m.InstanceUUID,
				m.OldInstanceTypeID, m.NewInstanceTypeID, m.MigrationType, m.Hidden, m.CrossCellMove, ptr(m.UserID), ptr(m.ProjectID)}
		})
	})
}

// InsertComputeNodes writes compute nodes in one transaction.
func InsertComputeNodes(ctx context.Context, db *DB, nodes []nova.ComputeNode) error {
	return InsertCellRows(ctx, db, CellRows{ComputeNodes: nodes})
}

// InsertServices writes services in one transaction.
func InsertServices(ctx context.Context, db *DB, svcs []nova.Service) error {
	return InsertCellRows(ctx, db, CellRows{Services: svcs})
}

var computeNodeCols = []string{
	"id", "created_at", "updated_at", "deleted_at", "deleted", "service_id", "host", "hypervisor_hostname", "uuid",
	"vcpus", "memory_mb", "local_gb", "vcpus_used", "memory_mb_used", "local_gb_used",
	"hypervisor_type", "hypervisor_version", "cpu_info",
	"disk_available_least", "free_ram_mb", "free_disk_gb", "current_workload", "running_vms", "host_ip",
	"supported_instances", "pci_stats", "metrics", "extra_resources", "stats", "numa_topology",
	"ram_allocation_ratio", "cpu_allocation_ratio", "disk_allocation_ratio", "mapped",
}

var serviceCols = []string{"id", "created_at", "updated_at", "deleted_at", "deleted", "uuid",
	"host", "binary", "topic", "report_count", "disabled", "disabled_reason", "last_seen_up", "forced_down", "version"}

var instanceCols = []string{"id", "uuid", "created_at", "updated_at", "deleted_at", "deleted",
	"user_id", "project_id", "image_ref", "hostname", "display_name", "host", "node", "launched_on",
	"availability_zone", "vm_state", "task_state", "power_state", "launched_at", "instance_type_id",
	"memory_mb", "vcpus", "root_gb", "ephemeral_gb",
	// Nova's create path sets these; API listings filter on them.
	"launch_index", "locked", "hidden", "cleaned", "shutdown_terminate", "disable_terminate", "reservation_id"}

var instanceExtraCols = []string{"id", "created_at", "updated_at", "deleted_at", "deleted", "instance_uuid",
	"flavor", "numa_topology", "pci_requests"}

var migrationCols = []string{"id", "uuid", "created_at", "updated_at", "deleted_at", "deleted",
	"source_compute", "dest_compute", "dest_host", "source_node", "dest_node", "status", "instance_uuid",
	"old_instance_type_id", "new_instance_type_id", "migration_type", "hidden", "cross_cell_move", "user_id", "project_id"}

// APIRows are rows for the Nova API database.
type APIRows struct {
	CellMappings     []nova.CellMapping
	HostMappings     []nova.HostMapping
	Flavors          []nova.Flavor // written to flavors and flavor_extra_specs
	InstanceMappings []nova.InstanceMapping
	// Replace deletes every host mapping, instance mapping, flavor and extra
	// spec first (cell mappings are kept: they may be how rpctl found the
	// cells).
	Replace bool
}

// flavorSpec is one flavor_extra_specs row.
type flavorSpec struct {
	f   *nova.Flavor
	key string
}

// InsertAPIRows writes rows into the API database in one transaction.
func InsertAPIRows(ctx context.Context, api *DB, r APIRows) error {
	var specs []flavorSpec
	for i := range r.Flavors {
		for _, k := range sortedKeys(r.Flavors[i].ExtraSpecs) {
			specs = append(specs, flavorSpec{&r.Flavors[i], k})
		}
	}
	return api.Tx(ctx, func(tx *sqlx.Tx) error {
		if r.Replace {
			if err := clearTables(ctx, api, tx, "host_mappings", "instance_mappings", "flavor_extra_specs", "flavors"); err != nil {
				return err
			}
		}
		if err := insertAll(ctx, api, tx, "cell_mappings", []string{"id", "created_at", "uuid", "name", "transport_url", "database_connection", "disabled"},
			r.CellMappings, func(c *nova.CellMapping) []any {
				return []any{c.ID, api.timeArg(c.CreatedAt), c.UUID, c.Name, c.TransportURL, c.DatabaseConnection, c.Disabled}
			}); err != nil {
			return err
		}
		if err := insertAll(ctx, api, tx, "host_mappings", []string{"id", "created_at", "cell_id", "host"},
			r.HostMappings, func(h *nova.HostMapping) []any {
				return []any{h.ID, api.timeArg(h.CreatedAt), h.CellID, h.Host}
			}); err != nil {
			return err
		}
		if err := insertAll(ctx, api, tx, "flavors", []string{"id", "created_at", "flavorid", "name", "memory_mb", "vcpus", "root_gb",
			"ephemeral_gb", "swap", "rxtx_factor", "vcpu_weight", "disabled", "is_public", "description"},
			r.Flavors, func(f *nova.Flavor) []any {
				return []any{f.ID, api.timeArg(f.CreatedAt), f.FlavorID, f.Name, f.MemoryMB, f.VCPUs, f.RootGB,
					f.EphemeralGB, f.Swap, f.RxtxFactor, ptr(f.VCPUWeight), f.Disabled, f.IsPublic, ptr(f.Description)}
			}); err != nil {
			return err
		}
		if err := insertAll(ctx, api, tx, "instance_mappings", []string{"created_at", "instance_uuid", "cell_id", "project_id", "user_id", "queued_for_delete"},
			r.InstanceMappings, func(m *nova.InstanceMapping) []any {
				return []any{api.timeArg(m.CreatedAt), m.InstanceUUID, ptr(m.CellID), m.ProjectID, ptr(m.UserID), false}
			}); err != nil {
			return err
		}
		return insertAll(ctx, api, tx, "flavor_extra_specs", []string{"created_at", "flavor_id", "key", "value"},
			specs, func(s *flavorSpec) []any {
				return []any{api.timeArg(s.f.CreatedAt), s.f.ID, s.key, s.f.ExtraSpecs[s.key]}
			})
	})
}

// CountComputeNodes counts a cell's compute nodes.
func CountComputeNodes(ctx context.Context, cell *DB, includeDeleted bool) (int, error) {
	q := `SELECT COUNT(*) FROM compute_nodes`
	if !includeDeleted {
		q += ` WHERE ` + liveNode
	}
	var n int
	if err := cell.GetContext(ctx, &n, q); err != nil {
		return 0, cell.Errorf("count compute_nodes: %w", CleanError(err))
	}
	return n, nil
}

// CountRows counts the rows of a table, for summaries.
func CountRows(ctx context.Context, db *DB, table string) (int, error) {
	var n int
	if err := db.GetContext(ctx, &n, "SELECT COUNT(*) FROM "+table); err != nil {
		return 0, db.Errorf("count %s: %w", table, CleanError(err))
	}
	return n, nil
}

// ListComputeNodes returns a cell's compute nodes ordered by id, soft-deleted
// ones only when includeDeleted. It runs one query and scans positionally:
// migrations and status checks read 100,000 rows with it.
func ListComputeNodes(ctx context.Context, cell *DB, includeDeleted bool) ([]nova.ComputeNode, error) {
	// No bound parameters: go-sql-driver then uses the text protocol, where
	// FLOAT columns arrive as the decimal MySQL prints, not as float32 bits.
	q := "SELECT `" + strings.Join(computeNodeCols, "`, `") + "` FROM compute_nodes"
	if !includeDeleted {
		q += " WHERE " + liveNode
	}
	q += " ORDER BY id"
	rows, err := cell.QueryContext(ctx, q)
	if err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", CleanError(err))
	}
	defer rows.Close()
	var out []nova.ComputeNode
	if !includeDeleted {
		out = make([]nova.ComputeNode, 0, 64)
	}
	var (
		created, updated, deletedAt                            sql.NullTime
		deleted, serviceID, dal, freeRAM, freeDisk, work, vms  sql.NullInt64
		mapped                                                 sql.NullInt64
		host, hhn, uuid, hostIP, supp, pci, metrics, extra, st sql.NullString
		numa                                                   sql.NullString
		ramRatio, cpuRatio, diskRatio                          sql.NullFloat64
	)
	for rows.Next() {
		var n nova.ComputeNode
		if err := rows.Scan(&n.ID, &created, &updated, &deletedAt, &deleted, &serviceID, &host, &hhn, &uuid,
			&n.VCPUs, &n.MemoryMB, &n.LocalGB, &n.VCPUsUsed, &n.MemoryMBUsed, &n.LocalGBUsed,
			&n.HypervisorType, &n.HypervisorVersion, &n.CPUInfo,
			&dal, &freeRAM, &freeDisk, &work, &vms, &hostIP,
			&supp, &pci, &metrics, &extra, &st, &numa,
			&ramRatio, &cpuRatio, &diskRatio, &mapped); err != nil {
			return nil, cell.Errorf("read compute_nodes: %w", CleanError(err))
		}
		n.CreatedAt, n.UpdatedAt, n.DeletedAt = timePtr(created), timePtr(updated), timePtr(deletedAt)
		n.Deleted = deleted.Int64
		n.ServiceID, n.DiskAvailableLeast, n.FreeRAMMB = intPtr(serviceID), intPtr(dal), intPtr(freeRAM)
		n.FreeDiskGB, n.CurrentWorkload, n.RunningVMs, n.Mapped = intPtr(freeDisk), intPtr(work), intPtr(vms), intPtr(mapped)
		n.Host, n.HypervisorHostname, n.UUID, n.HostIP = strPtr(host), strPtr(hhn), strPtr(uuid), strPtr(hostIP)
		n.SupportedInstances, n.PCIStats, n.Metrics = strPtr(supp), strPtr(pci), strPtr(metrics)
		n.ExtraResources, n.Stats, n.NUMATopology = strPtr(extra), strPtr(st), strPtr(numa)
		n.RAMAllocationRatio = cell.floatPtr(ramRatio)
		n.CPUAllocationRatio = cell.floatPtr(cpuRatio)
		n.DiskAllocationRatio = cell.floatPtr(diskRatio)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", CleanError(err))
	}
	return out, nil
}

func timePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func intPtr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	x := v.Int64
	return &x
}

func strPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	x := v.String
	return &x
}

// floatPtr reads an allocation ratio. MySQL's FLOAT is single precision: a
// stored 1.1 can come back as 1.100000023841858 (binary protocol, or a
// server that prints full precision), so MySQL values are rounded to the
// shortest decimal that is the same float32, which is what was written.
func (db *DB) floatPtr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	x := v.Float64
	if db.IsMySQL() && !math.IsInf(x, 0) && !math.IsNaN(x) && math.Abs(x) < math.MaxFloat32 {
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', -1, 32), 64)
	}
	return &x
}

func sortedKeys(m map[string]string) []string {
	// Sorted so that flavor_extra_specs ids are deterministic.
	return slices.Sorted(maps.Keys(m))
}

// CellConnectionURL is the SQLAlchemy URL, password included, that a
// cell_mappings.database_connection needs for Nova (and rpctl) to reach db.
// With cell0 it names Nova's conventional "<database>_cell0" beside it, which
// rpctl neither creates nor uses.
func CellConnectionURL(db *DB, cell0 bool) (string, error) {
	suffix := ""
	if cell0 {
		suffix = "_cell0"
	}
	if !db.IsMySQL() {
		return "sqlite:///" + db.Target.Database + suffix, nil
	}
	cfg, err := mysql.ParseDSN(db.Target.DSN)
	if err != nil {
		return "", db.Errorf("%v", err)
	}
	u := url.URL{Scheme: "mysql+pymysql", User: url.UserPassword(cfg.User, cfg.Passwd), Path: "/" + cfg.DBName + suffix, RawQuery: "charset=utf8"}
	if cfg.Net == "unix" {
		u.Host = "localhost"
		u.RawQuery += "&unix_socket=" + url.QueryEscape(cfg.Addr)
	} else {
		u.Host = cfg.Addr
	}
	return u.String(), nil
}

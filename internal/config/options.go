package config

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Nova's defaults for the options rpctl reads (nova/conf/compute.py, Zed).
// The initial ratios' defaults changed in Nova 27: a command that knows
// the cloud's release replaces the ones no file set
// (Ratios.InitialCPUSource "") with that release's
// (migrate.InitialRatioDefaults).
const (
	DefaultInitialCPUAllocationRatio  = 16.0
	DefaultInitialRAMAllocationRatio  = 1.5
	DefaultInitialDiskAllocationRatio = 1.0
	DefaultReservedHostMemoryMB       = 512
	DefaultAvailabilityZone           = "nova"                                 // nova/conf/availability_zone.py
	DefaultIncompleteConsumerID       = "00000000-0000-0000-0000-000000000000" // placement/conf/placement.py
)

// Setting is an option value together with where it came from, so that an
// error about it can name the file and line (or flag) to fix.
type Setting struct {
	Value  string
	Source string // "nova.conf:12", "--cell-db", ...
}

// Options are the nova.conf/placement.conf options rpctl uses.
type Options struct {
	// SQLAlchemy URLs (or go-sql-driver DSNs).
	CellDB      Setting // [database] connection
	APIDB       Setting // [api_database] connection
	PlacementDB Setting // [placement_database] connection

	Ratios   Ratios
	Reserved Reserved
	PCI      PCI
	// DefaultAvailabilityZone is [DEFAULT] default_availability_zone
	// ("nova"), the zone of a host in no zone's aggregate.
	DefaultAvailabilityZone string
	// IncompleteConsumerProject and IncompleteConsumerUser are
	// placement.conf's [placement] incomplete_consumer_project_id and
	// incomplete_consumer_user_id (placement/conf/placement.py: all zeros),
	// the external ids create_incomplete_consumers gives the consumers it
	// creates.
	IncompleteConsumerProject, IncompleteConsumerUser string
	// Upstream are the options nova-status and placement-status read.
	Upstream Upstream
	// CandidateGeneration are placement.conf's [placement]
	// max_allocation_candidates and allocation_candidates_generation_strategy
	// as written (unset: zero Settings). They exist from some release on
	// (Placement 13.0.0 has them, 8.0.0 not): candidates.GenerationOf
	// parses them for the release it follows, so that a file a release
	// ignores is never refused.
	MaxAllocationCandidates, GenerationStrategy Setting
	// NovaRelease is [rpctl] nova_release: the OpenStack release the cloud
	// runs, as the operator names it (what --nova-release says on the
	// command line). Nova and Placement ignore a section they do not
	// register, so it can sit in nova.conf.
	NovaRelease Setting
	// Files are the config files read, in order (oslo.config's
	// config_file, where find_file looks).
	Files []string
}

// PCI is nova.conf's [pci] as Nova's PCI Placement report reads it.
type PCI struct {
	// ReportInPlacement is [pci] report_in_placement (False in Zed).
	ReportInPlacement bool
	// DeviceSpec are the [pci] device_spec values in order (a JSON dict or
	// list each), or those of its deprecated names [pci]
	// passthrough_whitelist and [DEFAULT] pci_passthrough_whitelist.
	DeviceSpec []string
	// Source names where they came from, for messages.
	Source string
}

// Ratios are Nova's allocation-ratio options. A nil override means the option
// is unset, which since Stein is different from any value: unset lets an
// operator manage the ratio through the Placement API.
type Ratios struct {
	CPU, RAM, Disk                      *float64 // cpu_allocation_ratio, ...
	InitialCPU, InitialRAM, InitialDisk float64  // initial_cpu_allocation_ratio, ...
	// Sources name where each override came from, for status messages.
	CPUSource, RAMSource, DiskSource string
	// InitialCPUSource, ... name where each initial_xxx_allocation_ratio
	// came from ("nova.conf:12", a flag); "" is Nova's default, which
	// depends on the release.
	InitialCPUSource, InitialRAMSource, InitialDiskSource string
}

// Reserved are the host reservations Nova's resource tracker subtracts.
type Reserved struct {
	CPUs     int64 // reserved_host_cpus
	MemoryMB int64 // reserved_host_memory_mb
	DiskMB   int64 // reserved_host_disk_mb
}

// DefaultOptions returns Nova's defaults with no database configured.
func DefaultOptions() Options {
	return Options{
		Ratios: Ratios{
			InitialCPU:  DefaultInitialCPUAllocationRatio,
			InitialRAM:  DefaultInitialRAMAllocationRatio,
			InitialDisk: DefaultInitialDiskAllocationRatio,
		},
		Reserved:                  Reserved{MemoryMB: DefaultReservedHostMemoryMB},
		DefaultAvailabilityZone:   DefaultAvailabilityZone,
		IncompleteConsumerProject: DefaultIncompleteConsumerID,
		IncompleteConsumerUser:    DefaultIncompleteConsumerID,
	}
}

// LoadFiles reads the oslo.config files in order (later files win) and returns
// the options rpctl uses. A file that cannot be read or parsed, or an option
// with a bad value, is an error naming the file, line and option.
func LoadFiles(paths []string) (Options, error) {
	ini := NewINI()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return Options{}, fmt.Errorf("config file: %w", err)
		}
		err = ini.Parse(f, p)
		f.Close()
		if err != nil {
			return Options{}, fmt.Errorf("config file %w", err)
		}
	}
	o, err := FromINI(ini)
	if err != nil {
		return Options{}, err
	}
	o.Files = append([]string(nil), paths...)
	return o, nil
}

// FromINI extracts Options from parsed files.
func FromINI(ini *INI) (Options, error) {
	o := DefaultOptions()
	var err error
	// get is ini.Lookup keeping the first error (a failed substitution).
	get := func(section, key string) (string, string, bool) {
		if err != nil {
			return "", "", false
		}
		v, src, ok, lerr := ini.Lookup(section, key)
		if lerr != nil {
			err = lerr
			return "", "", false
		}
		return v, src, ok
	}
	str := func(section, key string) Setting {
		v, src, ok := get(section, key)
		if !ok || v == "" {
			return Setting{}
		}
		return Setting{Value: v, Source: src}
	}
	o.CellDB = str("database", "connection")
	o.APIDB = str("api_database", "connection")
	o.PlacementDB = str("placement_database", "connection")
	o.NovaRelease = str("rpctl", "nova_release")
	if v, src, ok := get("placement", "max_allocation_candidates"); ok {
		o.MaxAllocationCandidates = Setting{Value: v, Source: src}
	}
	if v, src, ok := get("placement", "allocation_candidates_generation_strategy"); ok {
		o.GenerationStrategy = Setting{Value: v, Source: src}
	}
	// A StrOpt: an empty value is the empty string, not the default.
	if v, _, ok := get("DEFAULT", "default_availability_zone"); ok {
		o.DefaultAvailabilityZone = v
	}
	if v, _, ok := get("placement", "incomplete_consumer_project_id"); ok {
		o.IncompleteConsumerProject = v
	}
	if v, _, ok := get("placement", "incomplete_consumer_user_id"); ok {
		o.IncompleteConsumerUser = v
	}

	ratio := func(key string, dst **float64, srcDst *string) {
		v, src, ok := get("DEFAULT", key)
		if !ok || v == "" || v == "<None>" {
			return
		}
		var f float64
		if f, err = ParseRatio(v, src+": [DEFAULT] "+key); err == nil {
			*dst, *srcDst = &f, src
		}
	}
	ratio("cpu_allocation_ratio", &o.Ratios.CPU, &o.Ratios.CPUSource)
	ratio("ram_allocation_ratio", &o.Ratios.RAM, &o.Ratios.RAMSource)
	ratio("disk_allocation_ratio", &o.Ratios.Disk, &o.Ratios.DiskSource)

	initial := func(key string, dst *float64, srcDst *string) {
		if v, src, ok := get("DEFAULT", key); ok && v != "" {
			*dst, err = ParseRatio(v, src+": [DEFAULT] "+key)
			*srcDst = src
		}
	}
	initial("initial_cpu_allocation_ratio", &o.Ratios.InitialCPU, &o.Ratios.InitialCPUSource)
	initial("initial_ram_allocation_ratio", &o.Ratios.InitialRAM, &o.Ratios.InitialRAMSource)
	initial("initial_disk_allocation_ratio", &o.Ratios.InitialDisk, &o.Ratios.InitialDiskSource)

	// reserved_host_* are Nova's IntOpt(min=0), no maximum: a negative
	// value is refused as Nova refuses it; so is one Placement could never
	// hold as an inventory's reserved (its schema's maximum, MAX_INT
	// 2147483647; for disk, reserved_host_disk_mb rounded up to GiB).
	// Nova 26 would start with it, put it as the inventory's reserved
	// (LibvirtDriver.update_provider_tree) and have every inventory update
	// refused by Placement; rpctl used to cap it at each node's total
	// without a word (issue 37 row 7).
	integer := func(key string, dst *int64, most int64) {
		if v, src, ok := get("DEFAULT", key); ok && v != "" {
			n, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil || n < 0 {
				err = fmt.Errorf("%s: [DEFAULT] %s: expected a non-negative integer, got %q", src, key, v)
				return
			}
			if n > most {
				err = fmt.Errorf("%s: [DEFAULT] %s: %d is more than Placement can hold as an inventory's reserved (at most %d); Nova's inventory updates would all be refused", src, key, n, most)
				return
			}
			*dst = n
		}
	}
	if v, src, ok := get("pci", "report_in_placement"); ok && v != "" {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "t", "true", "on", "y", "yes":
			o.PCI.ReportInPlacement = true
		case "0", "f", "false", "off", "n", "no":
		default:
			err = fmt.Errorf("%s: [pci] report_in_placement: expected a boolean, got %q", src, v)
		}
	}
	// device_spec first, then its deprecated names (oslo.config's
	// deprecated_opts: the new name wins when both are set).
	for _, name := range [][2]string{{"pci", "device_spec"}, {"pci", "passthrough_whitelist"}, {"DEFAULT", "pci_passthrough_whitelist"}} {
		if err != nil {
			break
		}
		vals, src, ok, lerr := ini.LookupMulti(name[0], name[1])
		if lerr != nil {
			err = lerr
			break
		}
		if ok {
			o.PCI.DeviceSpec, o.PCI.Source = vals, src
			break
		}
	}
	const maxInt = 0x7FFFFFFF // Placement's db_const.MAX_INT
	integer("reserved_host_cpus", &o.Reserved.CPUs, maxInt)
	integer("reserved_host_memory_mb", &o.Reserved.MemoryMB, maxInt)
	integer("reserved_host_disk_mb", &o.Reserved.DiskMB, maxInt*1024) // reserved DISK_GB is the MiB rounded up to GiB
	if err == nil {
		err = readUpstream(get, &o)
	}
	if err != nil {
		return Options{}, err
	}
	return o, nil
}

// ParseRatio parses an allocation ratio as Nova's FloatOpt(min=0.0) would,
// naming what in the error so the operator knows which option to fix.
func ParseRatio(v, what string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s: expected a number, got %q", what, v)
	}
	if f < 0 {
		return 0, fmt.Errorf("%s: must be >= 0.0, got %q", what, v)
	}
	return f, nil
}

package shared

import (
	"fmt"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/status"
)

// ComputeConfigDirUsage is the help of --compute-config-dir, shared by
// the commands that plan what the compute nodes' nova-compute reports.
const ComputeConfigDirUsage = "directory of the compute hosts' own nova.conf files, DIR/<host>.conf (the host column of compute_nodes): each is read over --config-file, and a node of that host takes from it what its nova-compute reads from its own config ([pci] report_in_placement and device_spec, reserved_host_*, *_allocation_ratio, initial_*_allocation_ratio; ratio flags still win); other hosts use --config-file"

// ComputeConfig is what the compute nodes' nova-compute reads from
// nova.conf, as an inventory plan's config (migrate.ComputeConfig): the
// global config files' options, ratios passed through ratios (a command's
// ratio flags; nil keeps them), and with hostConfDir (--compute-config-dir)
// every host's own file read over them. `migrate inventory` and `rpctl
// status` plan with it, so that both see the same nova-compute.
//
// rel is the release whose nova-compute reports the devices: its
// standard traits are the ones a [pci] device_spec traits tag keeps as
// they are (migrate.PCIConfig.Release).
func ComputeConfig(f *cmdutil.Factory, rel release.Name, ratios func(config.Ratios) (config.Ratios, error), hostConfDir string) (migrate.InventoryConfig, error) {
	if ratios == nil {
		ratios = func(r config.Ratios) (config.Ratios, error) { return r, nil }
	}
	o, err := f.Options()
	if err != nil {
		return migrate.InventoryConfig{}, err
	}
	r, err := ratios(o.Ratios)
	if err != nil {
		return migrate.InventoryConfig{}, err
	}
	c, err := migrate.ComputeConfig(o)
	if err != nil {
		return c, err
	}
	c.Ratios = r
	c.PCI.Release = rel
	if c.Hosts, err = hostConfigs(f, ratios, hostConfDir); err != nil {
		return c, err
	}
	for host, hc := range c.Hosts {
		hc.PCI.Release = rel
		c.Hosts[host] = hc
	}
	return c, nil
}

// hostConfigs reads --compute-config-dir: for every DIR/<host>.conf, the
// global config files with that file read last, the ratio flags winning.
// A file that does not parse, or whose options are bad, is an error
// naming it.
func hostConfigs(f *cmdutil.Factory, ratios func(config.Ratios) (config.Ratios, error), dir string) (map[string]migrate.HostConfig, error) {
	if dir == "" {
		return nil, nil
	}
	files, err := config.HostFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("--compute-config-dir %w", err)
	}
	out := make(map[string]migrate.HostConfig, len(files))
	for host, file := range files {
		o, err := f.HostOptions(file)
		if err != nil {
			return nil, fmt.Errorf("--compute-config-dir: host %s: %w", host, err)
		}
		hc := migrate.HostConfig{Source: file, Reserved: o.Reserved}
		if hc.Ratios, err = ratios(o.Ratios); err != nil {
			return nil, fmt.Errorf("--compute-config-dir: host %s: %s: %w", host, file, err)
		}
		if hc.PCI, err = migrate.ParsePCIConfig(o.PCI.ReportInPlacement, o.PCI.DeviceSpec); err != nil {
			return nil, fmt.Errorf("--compute-config-dir: host %s: %s: %w", host, o.PCI.Source, err)
		}
		out[host] = hc
	}
	return out, nil
}

// StatusCompute sets env's plan config for the Compute Node Inventories
// check from nova.conf and --compute-config-dir (hostConfDir), with
// env.Release's initial ratio defaults, as `rpctl
// status` and the exporter both run it: a bad --compute-config-dir is
// returned (a usage error of the command); a nova.conf option the plan
// cannot use fails only the check that plans (env.ComputeErr).
func StatusCompute(f *cmdutil.Factory, env *status.Env, hostConfDir string) error {
	// The initial ratios nova.conf leaves unset are the checked release's
	// Nova's defaults, as migrate inventory --release takes them.
	compute, err := ComputeConfig(f, env.Release, func(r config.Ratios) (config.Ratios, error) { return migrate.RatiosFor(r, env.Release) }, hostConfDir)
	switch {
	case err == nil:
		env.Compute = &compute
	case hostConfDir != "":
		return err
	default:
		env.ComputeErr = err
	}
	return nil
}

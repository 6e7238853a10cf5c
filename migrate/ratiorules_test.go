package migrate

import (
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/release"
)

func ratioFP(v float64) *float64 { return &v }

func TestEffectiveRatio(t *testing.T) {
	tests := []struct {
		name     string
		row      *float64
		override *float64
		initial  float64
		want     float64
		src      RatioSource
		fix      bool
	}{
		{"set row wins over everything", ratioFP(4), ratioFP(2), 16, 4, FromComputeNode, false},
		{"NULL row, no override: initial", nil, nil, 16, 16, FromInitial, true},
		{"0.0 row, no override: initial", ratioFP(0), nil, 16, 16, FromInitial, true},
		{"NULL row, override", nil, ratioFP(3), 16, 3, FromOverride, true},
		{"0.0 row, override", ratioFP(0), ratioFP(3), 16, 3, FromOverride, true},
		// Nova 26: `r if r else init_x_ratio` treats an explicit 0.0 as unset.
		{"NULL row, override 0.0 falls back to initial", nil, ratioFP(0), 16, 16, FromInitial, true},
		{"negative row is left alone, as Nova does", ratioFP(-1), ratioFP(3), 16, -1, FromComputeNode, false},
		{"tiny but non-zero row is set", ratioFP(1e-7), ratioFP(3), 16, 1e-7, FromComputeNode, false},
		{"initial 0.0 gives 0.0 (caller must refuse)", nil, nil, 0, 0, FromInitial, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, src, fix := EffectiveRatio(tt.row, tt.override, tt.initial)
			if v != tt.want || src != tt.src || fix != tt.fix {
				t.Errorf("EffectiveRatio = %v, %s, %v; want %v, %s, %v", v, src, fix, tt.want, tt.src, tt.fix)
			}
		})
	}
}

func TestPlacementRatio(t *testing.T) {
	tests := []struct {
		name                    string
		override, existing, row *float64
		initial                 float64
		want                    float64
		src                     RatioSource
	}{
		// Scenario 1: always override from config.
		{"override beats an API-set value", ratioFP(2), ratioFP(5), ratioFP(4), 16, 2, FromOverride},
		{"override on create", ratioFP(2), nil, nil, 16, 2, FromOverride},
		// Scenario 2/3: no override, the API value survives.
		{"existing Placement value kept", nil, ratioFP(5), ratioFP(4), 16, 5, FromPlacement},
		{"override 0.0 is unset: existing kept", ratioFP(0), ratioFP(5), nil, 16, 5, FromPlacement},
		{"create from the legacy row's ratio", nil, nil, ratioFP(4), 16, 4, FromComputeNode},
		{"create, row NULL: initial", nil, nil, nil, 16, 16, FromInitial},
		{"create, row 0.0: initial", nil, nil, ratioFP(0), 16, 16, FromInitial},
		{"create, row negative: initial", nil, nil, ratioFP(-1), 16, 16, FromInitial},
		{"create, override 0.0, row 0.0: initial", ratioFP(0), nil, ratioFP(0), 1.5, 1.5, FromInitial},
		// Issue 37 row 4: an API-set 0.0 (or negative) ratio gives way to the row.
		{"an API-set 0.0 gives way to the row's ratio", nil, ratioFP(0), ratioFP(16), 1, 16, FromComputeNode},
		{"an API-set negative ratio gives way to the row's ratio", nil, ratioFP(-2), ratioFP(16), 1, 16, FromComputeNode},
		{"an API-set 0.0, row 0.0: initial", nil, ratioFP(0), ratioFP(0), 1.5, 1.5, FromInitial},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, src := PlacementRatio(tt.override, tt.existing, tt.row, tt.initial)
			if v != tt.want || src != tt.src {
				t.Errorf("PlacementRatio = %v, %s; want %v, %s", v, src, tt.want, tt.src)
			}
		})
	}
}

func TestRatioKinds(t *testing.T) {
	r := config.Ratios{CPU: ratioFP(1), RAM: ratioFP(2), Disk: ratioFP(3), InitialCPU: 4, InitialRAM: 5, InitialDisk: 6}
	want := map[RatioKind][4]any{
		RatioCPU:  {"cpu_allocation_ratio", "initial_cpu_allocation_ratio", "VCPU", [2]float64{1, 4}},
		RatioRAM:  {"ram_allocation_ratio", "initial_ram_allocation_ratio", "MEMORY_MB", [2]float64{2, 5}},
		RatioDisk: {"disk_allocation_ratio", "initial_disk_allocation_ratio", "DISK_GB", [2]float64{3, 6}},
	}
	for k, w := range want {
		o, i := k.Conf(r)
		if k.Option() != w[0] || k.InitialOption() != w[1] || k.ResourceClass() != w[2] || [2]float64{*o, i} != w[3] {
			t.Errorf("kind %d: %s %s %s %v %v", k, k.Option(), k.InitialOption(), k.ResourceClass(), *o, i)
		}
	}
}

func TestPlanRow(t *testing.T) {
	defaults := config.DefaultOptions().Ratios
	withOverrides := defaults
	withOverrides.CPU, withOverrides.RAM = ratioFP(4), ratioFP(0)
	zeroInitial := defaults
	zeroInitial.InitialCPU = 0
	tests := []struct {
		name    string
		node    NodeRatios
		r       config.Ratios
		want    map[string][2]string // column -> old, new
		wantErr string
	}{
		{"all empty, defaults", NodeRatios{ID: 1, CPU: ratioFP(0), RAM: nil, Disk: ratioFP(0)}, defaults,
			map[string][2]string{"cpu_allocation_ratio": {"0.0", "16.0"}, "ram_allocation_ratio": {"NULL", "1.5"}, "disk_allocation_ratio": {"0.0", "1.0"}}, ""},
		{"only the empty one changes", NodeRatios{ID: 2, CPU: ratioFP(8), RAM: ratioFP(1.2), Disk: nil}, defaults,
			map[string][2]string{"disk_allocation_ratio": {"NULL", "1.0"}}, ""},
		{"override, and 0.0 override falls back", NodeRatios{ID: 3, CPU: nil, RAM: nil, Disk: ratioFP(1)}, withOverrides,
			map[string][2]string{"cpu_allocation_ratio": {"NULL", "4.0"}, "ram_allocation_ratio": {"NULL", "1.5"}}, ""},
		{"initial 0.0 cannot fix", NodeRatios{ID: 4, CPU: nil, RAM: ratioFP(1), Disk: ratioFP(1)}, zeroInitial,
			nil, "cpu_allocation_ratio is NULL and would stay 0.0: initial_cpu_allocation_ratio is 0.0 and cpu_allocation_ratio is unset or 0.0"},
		{"initial 0.0 is harmless when CPU is set", NodeRatios{ID: 5, CPU: ratioFP(2), RAM: ratioFP(0), Disk: ratioFP(1)}, zeroInitial,
			map[string][2]string{"ram_allocation_ratio": {"0.0", "1.5"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PlanRow("cell1", tt.node, tt.r)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := map[string][2]string{}
			for _, c := range got {
				m[c.Ratio] = [2]string{FormatRatio(c.Old), FormatRatio(&c.New)}
			}
			if len(m) != len(tt.want) {
				t.Fatalf("got %v, want %v", m, tt.want)
			}
			for k, v := range tt.want {
				if m[k] != v {
					t.Errorf("%s: got %v, want %v", k, m[k], v)
				}
			}
		})
	}
}

func TestFormatRatio(t *testing.T) {
	for in, want := range map[float64]string{16: "16.0", 1.5: "1.5", 0: "0.0", 1.1: "1.1", 1e-7: "0.0000001"} {
		if got := FormatRatio(&in); got != want {
			t.Errorf("FormatRatio(%v) = %q, want %q", in, got, want)
		}
	}
	if got := FormatRatio(nil); got != "NULL" {
		t.Errorf("FormatRatio(nil) = %q", got)
	}
}

// TestInitialRatiosByRelease: each release's defaults as its Nova defines
// them (nova/conf/compute.py: Nova 26.2.2 :531/:547/:563, Nova 31.0.0
// :530/:546/:562), and an option set in nova.conf or by a flag (a
// source) keeps its value whatever the release.
func TestInitialRatiosByRelease(t *testing.T) {
	set := config.Ratios{InitialCPU: 2, InitialCPUSource: "nova.conf:3", InitialRAM: 99, InitialDisk: 99}
	for _, tt := range []struct {
		release        release.Name
		in             config.Ratios
		cpu, ram, disk float64
		wantErr        bool
	}{
		{"", config.DefaultOptions().Ratios, 16, 1.5, 1, false},
		{release.Zed, config.DefaultOptions().Ratios, 16, 1.5, 1, false},
		{release.R2025_1, config.DefaultOptions().Ratios, 4, 1, 1, false},
		{"2025.1", config.Ratios{}, 4, 1, 1, false},
		{release.Zed, set, 2, 1.5, 1, false},
		{release.R2025_1, set, 2, 1, 1, false},
		{release.R2025_1, config.Ratios{InitialRAM: 0, InitialRAMSource: "--initial-ram-allocation-ratio"}, 4, 0, 1, false},
		// Nova 27.0.0 (2023.1) changed the defaults (nova commit 1260cdd492,
		// nova/conf/compute.py:532/:548/:564); Nova 28-30 keep them.
		{release.R2023_1, config.Ratios{}, 4, 1, 1, false},
		{release.R2023_2, config.Ratios{}, 4, 1, 1, false},
		{release.R2024_1, config.Ratios{}, 4, 1, 1, false},
		{release.R2024_2, config.Ratios{}, 4, 1, 1, false},
		{release.R2024_1, set, 2, 1, 1, false},
		{"2025.2", config.Ratios{}, 0, 0, 0, true},
		{"yoga", config.Ratios{}, 0, 0, 0, true},
	} {
		got, err := RatiosFor(tt.in, tt.release)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q %+v: error %v", tt.release, tt.in, err)
			continue
		}
		if got.InitialCPU != tt.cpu || got.InitialRAM != tt.ram || got.InitialDisk != tt.disk {
			t.Errorf("%q %+v: initial %v/%v/%v, want %v/%v/%v", tt.release, tt.in, got.InitialCPU, got.InitialRAM, got.InitialDisk, tt.cpu, tt.ram, tt.disk)
		}
	}
	// Every release rpctl knows has its row; Zed's is config's defaults.
	for _, n := range release.Names() {
		if _, ok := InitialRatioDefaults[n]; !ok {
			t.Errorf("no initial ratios for %s", n)
		}
	}
	if len(InitialRatioDefaults) != len(release.Names()) {
		t.Errorf("InitialRatioDefaults has %d rows, internal/release knows %d releases", len(InitialRatioDefaults), len(release.Names()))
	}
	z := InitialRatioDefaults[release.Zed]
	if z != (InitialRatios{config.DefaultInitialCPUAllocationRatio, config.DefaultInitialRAMAllocationRatio, config.DefaultInitialDiskAllocationRatio}) {
		t.Errorf("Zed's row %+v is not config's defaults", z)
	}
}

// TestPlanRowByRelease: a NULL row gets the release's initial ratios.
func TestPlanRowByRelease(t *testing.T) {
	for _, tt := range []struct {
		release        release.Name
		cpu, ram, disk float64
	}{
		{release.Zed, 16, 1.5, 1},
		{release.R2025_1, 4, 1, 1},
	} {
		r, err := RatiosFor(config.DefaultOptions().Ratios, tt.release)
		if err != nil {
			t.Fatal(err)
		}
		changes, err := PlanRow("cell1", NodeRatios{ID: 1}, r)
		if err != nil || len(changes) != 3 {
			t.Fatalf("%s: %v, %v", tt.release, changes, err)
		}
		got := map[string]float64{}
		for _, c := range changes {
			got[c.Ratio] = c.New
			if c.Source != FromInitial {
				t.Errorf("%s %s: source %s", tt.release, c.Ratio, c.Source)
			}
		}
		if got["cpu_allocation_ratio"] != tt.cpu || got["ram_allocation_ratio"] != tt.ram || got["disk_allocation_ratio"] != tt.disk {
			t.Errorf("%s: %v, want %v/%v/%v", tt.release, got, tt.cpu, tt.ram, tt.disk)
		}
	}
}

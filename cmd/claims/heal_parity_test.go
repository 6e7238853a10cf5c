package claims_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// healFlavor is a Flavor primitive as instance_extra.flavor stores it,
// complete enough for Nova's own objects to load.
func healFlavor(name string, vcpus, mem, root, eph, swap int64, specs map[string]string) string {
	if specs == nil {
		specs = map[string]string{}
	}
	data := map[string]any{"id": 1, "name": name, "memory_mb": mem, "vcpus": vcpus, "root_gb": root, "ephemeral_gb": eph,
		"flavorid": name, "swap": swap, "rxtx_factor": 1.0, "vcpu_weight": 0, "disabled": false, "is_public": true,
		"extra_specs": specs, "description": nil}
	prim := map[string]any{"nova_object.name": "Flavor", "nova_object.namespace": "nova", "nova_object.version": "1.2", "nova_object.data": data}
	b, _ := json.Marshal(map[string]any{"cur": prim, "old": nil, "new": nil})
	return string(b)
}

// healCloud is the parity scenario: what each instance is and what
// Placement already holds.
type healCloud struct {
	nodes     []nova.ComputeNode
	instances []nova.Instance
	// bdms are root block device mappings: instance uuid -> destination.
	bdms       map[string]string
	migrations []nova.Migration
	// allocs are PUT /allocations bodies written before the heal.
	allocs map[string]string
	// orphanRows are allocation rows without a consumer record.
	orphanRows []string
}

const (
	healProject = "11111111-1111-4111-8111-111111111111"
	healUser    = "22222222-2222-4222-8222-222222222222"
)

func healUUID(kind byte, i int) string { return fmt.Sprintf("%c%07d-0000-4000-8000-%012d", kind, i, i) }

func newHealCloud() *healCloud {
	c := &healCloud{bdms: map[string]string{}, allocs: map[string]string{}}
	created := time.Date(2022, 5, 1, 8, 0, 0, 0, time.UTC)
	for i := 1; i <= 3; i++ {
		n := cmdtest.RatiosNode(int64(i), cmdtest.RatiosFP(4), cmdtest.RatiosFP(1.5), cmdtest.RatiosFP(1))
		u := healUUID('c', i)
		n.UUID, n.CreatedAt = &u, &created
		c.nodes = append(c.nodes, n)
	}
	small := healFlavor("small", 1, 512, 1, 0, 0, nil)
	big := healFlavor("big", 4, 4096, 20, 5, 1024, nil)
	gold := healFlavor("gold", 2, 1024, 10, 0, 0, map[string]string{"resources:CUSTOM_GOLD": "2", "resources:DISK_GB": "0"})
	pinned := healFlavor("pinned", 2, 2048, 10, 0, 0, map[string]string{"hw:cpu_policy": "dedicated"})
	add := func(i int, node int, flavor string, mod func(*nova.Instance)) {
		host := fmt.Sprintf("compute%03d", node)
		t := created.Add(time.Duration(i) * time.Minute)
		in := nova.Instance{ID: int64(i), UUID: healUUID('a', i), CreatedAt: &t, UserID: healUser, ProjectID: healProject,
			ImageRef: "155d900f-4e14-4e4c-a73d-069cbf4541e6", Hostname: fmt.Sprintf("vm%d", i), DisplayName: fmt.Sprintf("vm%d", i),
			Host: &host, Node: &host, VMState: "active", PowerState: 1, Flavor: &flavor, PCIRequests: ptrS("[]")}
		var f struct {
			Cur struct {
				Data struct{ VCPUs, MemoryMB, RootGB, EphemeralGB int64 } `json:"nova_object.data"`
			} `json:"cur"`
		}
		json.Unmarshal([]byte(flavor), &f)
		in.VCPUs, in.MemoryMB, in.RootGB, in.EphemeralGB = f.Cur.Data.VCPUs, f.Cur.Data.MemoryMB, f.Cur.Data.RootGB, f.Cur.Data.EphemeralGB
		if mod != nil {
			mod(&in)
		}
		c.instances = append(c.instances, in)
	}
	alloc := func(consumer string, node int, res string, project, user string, gen string) {
		c.allocs[consumer] = fmt.Sprintf(`{"allocations": {"%s": {"resources": %s}}, "project_id": "%s", "user_id": "%s", "consumer_generation": %s}`,
			healUUID('c', node), res, project, user, gen)
	}
	add(1, 1, small, nil) // missing: created
	add(2, 1, small, nil) // has its allocation
	alloc(healUUID('a', 2), 1, `{"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}`, healProject, healUser, "null")
	add(3, 2, big, nil) // boot from volume by its root BDM
	c.bdms[healUUID('a', 3)] = "volume"
	add(4, 2, big, func(in *nova.Instance) { in.ImageRef = "" }) // no image, no BDM: volume-backed
	add(5, 2, big, nil)                                          // image-backed by its root BDM
	c.bdms[healUUID('a', 5)] = "local"
	add(6, 1, gold, nil)   // resources: extra specs
	add(7, 2, pinned, nil) // PCPU
	add(8, 1, small, func(in *nova.Instance) { in.Deleted = 8; in.DeletedAt = &created })
	add(9, 1, small, func(in *nova.Instance) { in.VMState = "soft-delete" })
	// A resize waiting for confirmation: the instance runs on the
	// destination with the new flavor and holds nothing; the migration
	// holds the old flavor on the source.
	add(10, 3, big, func(in *nova.Instance) { in.VMState = "resized" })
	mig := healUUID('b', 1)
	c.migrations = append(c.migrations, nova.Migration{ID: 1, UUID: mig, CreatedAt: &created, SourceCompute: "compute001", DestCompute: "compute003",
		SourceNode: "compute001", DestNode: "compute003", Status: "finished", InstanceUUID: healUUID('a', 10), OldInstanceTypeID: 1, NewInstanceTypeID: 2,
		MigrationType: "resize", UserID: ptrS(healUser), ProjectID: ptrS(healProject)})
	alloc(mig, 1, `{"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}`, healProject, healUser, "null")
	// A live migration in progress: skipped for its task state.
	add(11, 3, small, func(in *nova.Instance) { in.TaskState = ptrS("migrating") })
	mig2 := healUUID('b', 2)
	c.migrations = append(c.migrations, nova.Migration{ID: 2, UUID: mig2, CreatedAt: &created, SourceCompute: "compute003", DestCompute: "compute002",
		SourceNode: "compute003", DestNode: "compute002", Status: "running", InstanceUUID: healUUID('a', 11), OldInstanceTypeID: 1, NewInstanceTypeID: 1,
		MigrationType: "live-migration", UserID: ptrS(healUser), ProjectID: ptrS(healProject)})
	alloc(mig2, 3, `{"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}`, healProject, healUser, "null")
	add(12, 1, small, nil) // allocation under the wrong project and user
	alloc(healUUID('a', 12), 1, `{"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}`, "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000", "null")
	add(13, 1, small, func(in *nova.Instance) { in.Host, in.Node = nil, nil }) // never scheduled
	add(14, 3, small, nil)                                                     // allocation rows but no consumer record
	c.orphanRows = append(c.orphanRows, healUUID('a', 14))
	for i := 15; i <= 20; i++ { // enough for --max-count batches
		add(i, 1+i%3, small, nil)
	}
	return c
}

// buildHealCloud writes c into Nova's own schemas and the real Placement.
func buildHealCloud(t *testing.T, c *healCloud) *cmdtest.HealSide {
	t.Helper()
	return fillHealCloud(t, c, cmdtest.ReferenceSide(t), testdb.PlacementAPI)
}

// fillHealCloud writes c into s, databases a release's own db sync made,
// and into the Placement startAPI serves (that release's placement-api).
func fillHealCloud(t *testing.T, c *healCloud, s *cmdtest.HealSide, startAPI func(testing.TB, string) string) *cmdtest.HealSide {
	t.Helper()
	ctx := context.Background()
	cell := cmdtest.OpenDB(t, s.Cell, storage.RoleCell)
	if err := celldb.InsertCellRows(ctx, cell, nova.CellRows{ComputeNodes: c.nodes, Instances: c.instances, Migrations: c.migrations}); err != nil {
		t.Fatal(err)
	}
	for u, dest := range c.bdms {
		if _, err := cell.ExecContext(ctx, `INSERT INTO block_device_mapping (created_at, instance_uuid, source_type, destination_type, boot_index, device_name, deleted, uuid)
VALUES (NOW(), ?, 'image', ?, 0, '/dev/vda', 0, UUID())`, u, dest); err != nil {
			t.Fatal(err)
		}
	}
	api := cmdtest.OpenDB(t, s.API, storage.RoleAPI)
	for _, q := range []string{
		`INSERT INTO cell_mappings (created_at, id, uuid, name, transport_url, database_connection, disabled) VALUES (NOW(), 1, '00000000-0000-0000-0000-000000000000', 'cell0', 'none:///', 'mysql+pymysql://x@127.0.0.1/unused', 0)`,
		fmt.Sprintf(`INSERT INTO cell_mappings (created_at, id, uuid, name, transport_url, database_connection, disabled) VALUES (NOW(), 2, 'dddddddd-0000-4000-8000-000000000001', 'cell1', 'fake://', '%s', 0)`, s.Cell.URL),
	} {
		if _, err := api.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range c.instances {
		if _, err := api.ExecContext(ctx, `INSERT INTO instance_mappings (created_at, instance_uuid, cell_id, project_id, user_id, queued_for_delete) VALUES (NOW(), ?, 2, ?, ?, 0)`,
			in.UUID, in.ProjectID, in.UserID); err != nil {
			t.Fatal(err)
		}
	}
	s.URL = startAPI(t, s.Placement.URL)
	do := func(method, path, body string, want int) {
		t.Helper()
		code, out := testdb.PlacementDo(t, method, s.URL, path, "1.28", body)
		if code != want {
			t.Fatalf("%s %s: %d %s", method, path, code, out)
		}
	}
	do("PUT", "/resource_classes/CUSTOM_GOLD", "", 201)
	for i, n := range c.nodes {
		do("POST", "/resource_providers", fmt.Sprintf(`{"name": %q, "uuid": %q}`, *n.HypervisorHostname, *n.UUID), 200)
		inv := `"VCPU": {"total": 8, "allocation_ratio": 4.0}, "MEMORY_MB": {"total": 16384, "reserved": 512, "allocation_ratio": 1.5}, "DISK_GB": {"total": 100}`
		switch i {
		case 0:
			inv += `, "CUSTOM_GOLD": {"total": 4}`
		case 1:
			inv += `, "PCPU": {"total": 4}`
		}
		do("PUT", "/resource_providers/"+*n.UUID+"/inventories", fmt.Sprintf(`{"resource_provider_generation": 0, "inventories": {%s}}`, inv), 200)
	}
	for _, consumer := range sortedKeys(c.allocs) {
		do("PUT", "/allocations/"+consumer, c.allocs[consumer], 204)
	}
	pl := cmdtest.OpenDB(t, s.Placement, storage.RolePlacement)
	for _, consumer := range c.orphanRows {
		if _, err := pl.ExecContext(ctx, `INSERT INTO allocations (created_at, resource_provider_id, consumer_id, resource_class_id, used)
SELECT NOW(), rp.id, ?, rc.id, 7 FROM resource_providers rp, resource_classes rc WHERE rp.uuid = ? AND rc.name = 'VCPU'`, consumer, healUUID('c', 3)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestClaimsHealParityWithNova runs Nova 26's own heal_allocations on one
// copy of a cloud and `rpctl claims heal` on another, step by step, and
// requires the same exit codes and the same answers from the real
// Placement for every consumer and provider after each step.
func TestClaimsHealParityWithNova(t *testing.T) {
	testdb.RequirePython(t, "nova.cmd.manage", "pymysql")
	c := newHealCloud()
	novaSide := buildHealCloud(t, c)
	rpctlSide := cmdtest.CloneSide(t, novaSide)
	novaSide.WriteNovaConf(t)
	rpctlSide.WriteNovaConf(t)
	healParity(t, "nova-manage", cmdtest.StartNovaManage(t), newHealTwins(t, c, [2]*cmdtest.HealSide{novaSide, rpctlSide}, [2]string{"nova", "rpctl"}))
}

// TestClaimsHealParityWithNova31 is TestClaimsHealParityWithNova against
// 2025.1's own code (issue 33's second leg): the databases made by Nova 31's
// and Placement 13's db sync in the release chroot, Placement 13's
// placement-api serving each copy, and Nova 31's heal_allocations run
// inside the chroot on one copy, rpctl claims heal on the other; the same
// steps must give the same exit codes and the same GET answers.
func TestClaimsHealParityWithNova31(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	c := newHealCloud()
	s := &cmdtest.HealSide{Cell: testdb.NewMySQL(t), API: testdb.NewMySQL(t), Placement: testdb.NewMySQL(t)}
	chroot.DBSync(t, s.Cell, s.API, s.Placement)
	startAPI := func(t testing.TB, url string) string { return chroot.PlacementAPI(t, url, "") }
	novaSide := fillHealCloud(t, c, s, startAPI)
	rpctlSide := cmdtest.CloneSideWith(t, novaSide, startAPI)
	novaSide.WriteNovaConf(t)
	rpctlSide.WriteNovaConf(t)
	// The steps script where the chroot sees it (the host's /tmp).
	script := filepath.Join(chroot.TempDir(t), "nova_manage_steps.py")
	b, err := os.ReadFile(cmdtest.NovaManageSteps())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, b, 0o644); err != nil {
		t.Fatal(err)
	}
	nm := cmdtest.StartNovaManageCmd(t, chroot.Command("python3", script))
	healParity(t, "nova-manage (Nova 31)", nm, newHealTwins(t, c, [2]*cmdtest.HealSide{novaSide, rpctlSide}, [2]string{"nova 31", "rpctl"}))
}

// healParity runs healSteps with nm's heal_allocations on twins' first copy
// and rpctl claims heal on the second.
func healParity(t *testing.T, novaName string, nm interface {
	Run(testing.TB, ...string) (string, int)
}, twins *healTwins) {
	t.Helper()
	novaSide, rpctlSide := twins.sides[0], twins.sides[1]
	twins.run(t, func(st healStep) string {
		novaArgs := append([]string{"--config-file", novaSide.Conf, "placement", "heal_allocations", "--skip-port-allocations", "--verbose"}, st.args...)
		novaOut, novaCode := nm.Run(t, novaArgs...)
		// nova-manage's own command line, --skip-port-allocations included.
		rargs := append([]string{"--config-file", rpctlSide.Conf, "claims", "heal", "--skip-port-allocations"}, st.args...)
		rOut, rErr, rCode := cmdtest.Rpctl(t, rargs...)
		if novaCode != rCode {
			t.Errorf("%s: exit code %s %d, rpctl %d\n%s:\n%s\nrpctl:\n%s%s", st.name, novaName, novaCode, rCode, novaName, novaOut, rOut, rErr)
		}
		if novaCode != st.want {
			t.Errorf("%s: %s exited %d, the reading of its code says %d:\n%s", st.name, novaName, novaCode, st.want, novaOut)
		}
		return fmt.Sprintf("%s:\n%s\nrpctl:\n%s%s", novaName, novaOut, rOut, rErr)
	})
}

// healTwins are two copies of the heal cloud that a parity test heals step
// by step, each its own way, comparing what the real Placement answers.
type healTwins struct {
	sides                [2]*cmdtest.HealSide
	names                [2]string
	cells                [2]*storage.DB
	consumers, providers []string
}

func newHealTwins(t *testing.T, c *healCloud, sides [2]*cmdtest.HealSide, names [2]string) *healTwins {
	w := &healTwins{sides: sides, names: names}
	for i, s := range sides {
		w.cells[i] = cmdtest.OpenDB(t, s.Cell, storage.RoleCell)
	}
	for _, in := range c.instances {
		w.consumers = append(w.consumers, in.UUID)
	}
	for _, m := range c.migrations {
		w.consumers = append(w.consumers, m.UUID)
	}
	for _, n := range c.nodes {
		w.providers = append(w.providers, *n.UUID)
	}
	return w
}

// compare requires the same GET answers for every consumer and provider.
func (w *healTwins) compare(t *testing.T, step string) {
	t.Helper()
	want, got := w.sides[0].ConsumersView(t, w.consumers, w.providers), w.sides[1].ConsumersView(t, w.consumers, w.providers)
	for _, k := range sortedKeysAny(want) {
		if !reflect.DeepEqual(want[k], got[k]) {
			t.Errorf("%s: GET %s:\n %s: %v\n %s: %v", step, k, w.names[0], want[k], w.names[1], got[k])
		}
	}
}

// Run compares the copies, then for each of healSteps adds its instances
// to both cells, calls heal (which runs the step on both copies, checks
// its codes and returns both outputs), compares again and deletes the
// step's instances; it stops after the first step that failed.
func (w *healTwins) run(t *testing.T, heal func(st healStep) (outputs string)) {
	t.Helper()
	w.compare(t, "before")
	ctx := context.Background()
	for _, st := range healSteps() {
		for _, db := range w.cells {
			if err := celldb.InsertCellRows(ctx, db, nova.CellRows{Instances: st.add}); err != nil {
				t.Fatal(err)
			}
		}
		outputs := heal(st)
		w.compare(t, st.name)
		for _, in := range st.add {
			for _, db := range w.cells {
				if _, err := db.ExecContext(ctx, `UPDATE instances SET deleted = id, deleted_at = NOW() WHERE uuid = ?`, in.UUID); err != nil {
					t.Fatal(err)
				}
			}
			w.consumers = append(w.consumers, in.UUID)
		}
		if t.Failed() {
			t.Logf("%s: %s", st.name, outputs)
			return
		}
	}
}

// healStep is one heal run of the parity tests: its arguments, the
// instances added to the cells before it (deleted again after it), and
// nova-manage's exit code.
type healStep struct {
	name string
	args []string
	add  []nova.Instance
	want int // nova-manage's code, as read in nova/cmd/manage.py
}

// healSteps are the heal runs of the parity tests, reaching every exit code
// Rpctl shares with nova-manage.
func healSteps() []healStep {
	// Instances added to both cells before a step, to reach Nova's
	// failure codes; each is deleted again after its step.
	late := func(id int, node int, flavor string) []nova.Instance {
		c2 := newHealCloud()
		in := c2.instances[0]
		at := in.CreatedAt.Add(24 * time.Hour)
		host := fmt.Sprintf("compute%03d", node)
		in.ID, in.UUID, in.CreatedAt, in.Host, in.Node, in.Flavor = int64(id), healUUID('e', id), &at, &host, &host, &flavor
		return []nova.Instance{in}
	}
	return []healStep{
		{"dry run", []string{"--dry-run"}, nil, 4},
		{"max-count 0", []string{"--max-count", "0"}, nil, 127},
		{"max-count abc", []string{"--max-count", "abc"}, nil, 127},
		{"cell and instance", []string{"--cell", "dddddddd-0000-4000-8000-000000000001", "--instance", healUUID('a', 1)}, nil, 127},
		{"force without instance", []string{"--force"}, nil, 127},
		{"unmapped instance", []string{"--instance", healUUID('z', 1)}, nil, 127},
		{"unknown cell", []string{"--cell", "dddddddd-0000-4000-8000-00000000ffff"}, nil, 127},
		{"one instance", []string{"--instance", healUUID('a', 3)}, nil, 0},
		{"max-count 2", []string{"--max-count", "2"}, nil, 1},
		// Nova checks --max-count only after a whole page of 3: pages that
		// heal 1 or 2 let the next page go past it, here to 12 healed.
		{"max-count 3", []string{"--max-count", "3"}, nil, 0},
		{"again", nil, nil, 4},
		{"new instances", nil, append(late(105, 2, healFlavor("small", 1, 512, 1, 0, 0, nil)), late(106, 3, healFlavor("gold", 1, 512, 1, 0, 0, map[string]string{"resources:MEMORY_MB": "64"}))...), 0},
		{"force one", []string{"--instance", healUUID('a', 2), "--force"}, nil, 0},
		{"cell by uuid", []string{"--cell", "dddddddd-0000-4000-8000-000000000001"}, nil, 4},
		{"over capacity", nil, late(101, 1, healFlavor("huge", 1, 999999, 1, 0, 0, nil)), 3},
		{"unknown resource class", nil, late(102, 1, healFlavor("odd", 1, 1, 1, 0, 0, map[string]string{"resources:CUSTOM_NOPE": "1"})), 3},
		{"no compute node", nil, late(103, 9, healFlavor("small", 1, 1, 1, 0, 0, nil)), 2},
		{"vgpu", nil, late(104, 1, healFlavor("vgpu", 1, 1, 1, 0, 0, map[string]string{"resources:VGPU": "1"})), 8},
	}
}

func sortedKeysAny(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

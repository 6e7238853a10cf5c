package claims_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
)

func cu(n int) string { return fmt.Sprintf("a0000000-0000-4000-8000-%012d", n) }

// auditScenario is every case Nova's audit distinguishes: instances live on
// the provider's node, deleted, or on another node; in-progress and finished
// migrations; a provider whose compute node is gone; a sharing provider; a
// nested child; a consumer of non-Nova classes only; consumers on several
// providers (deleted by a PUT of the rest, then a DELETE).
func auditScenario() ([]nova.Instance, []nova.Migration, []claimsConsumer) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	inst := func(id int, host string, deleted bool) nova.Instance {
		i := nova.Instance{ID: int64(id), UUID: cu(id), CreatedAt: &created, UserID: "u1", ProjectID: "p1", VMState: "active",
			Host: ptrS("host" + host), Node: ptrS("node" + host)}
		if deleted {
			i.Deleted, i.DeletedAt, i.VMState = int64(id), &created, "deleted"
		}
		return i
	}
	instances := []nova.Instance{inst(1, "1", false), inst(2, "1", true), inst(3, "2", false), inst(4, "1", false),
		inst(5, "2", false), inst(6, "1", true), inst(7, "1", false)}
	mig := func(id int, instance int, status string) nova.Migration {
		return nova.Migration{ID: int64(id), UUID: cu(100 + id), CreatedAt: &created, SourceCompute: "host1", SourceNode: "node1",
			DestCompute: "host2", DestNode: "node2", Status: status, InstanceUUID: cu(instance), MigrationType: "resize"}
	}
	migrations := []nova.Migration{mig(1, 5, "finished"), mig(2, 1, "confirmed")}
	std := func(v, m int) map[string]int { return map[string]int{"VCPU": v, "MEMORY_MB": m} }
	consumers := []claimsConsumer{
		{cu(1), map[string]map[string]int{cn1UUID: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}}},
		{cu(2), map[string]map[string]int{cn1UUID: std(1, 512)}},
		{cu(3), map[string]map[string]int{cn1UUID: std(1, 512)}},
		{cu(4), map[string]map[string]int{cn1UUID: std(1, 512), shareUUID: {"DISK_GB": 10}}},
		{cu(5), map[string]map[string]int{cn2UUID: std(2, 1024)}},
		{cu(101), map[string]map[string]int{cn1UUID: std(2, 1024)}},
		{cu(102), map[string]map[string]int{cn2UUID: std(1, 256)}},
		{cu(6), map[string]map[string]int{cn1UUID: std(1, 256), child1: {"VGPU": 1}}},
		{cu(7), map[string]map[string]int{cn1UUID: std(1, 256), child1: {"VGPU": 1}}},
		{cu(900), map[string]map[string]int{ghostUUID: std(1, 256)}},
		{cu(901), map[string]map[string]int{cn1UUID: {"CUSTOM_FOO": 1}}},
	}
	return instances, migrations, consumers
}

func seedAuditCopy(t *testing.T, forNova bool, chroot *testdb.Chroot) (*claimsCopy, []string) {
	c := newClaimsCopyOf(t, forNova, chroot)
	instances, migrations, consumers := auditScenario()
	c.seedProviders(t)
	c.seedCell(t, instances, migrations)
	var uuids []string
	for _, cons := range consumers {
		c.put(t, cons)
		uuids = append(uuids, cons.uuid)
	}
	c.ageConsumers(t)
	return c, uuids
}

var novaAuditRE = regexp.MustCompile(`(?m)^(?:Allocations for|Deleted allocations for) consumer UUID (\S+) on Resource Provider ([0-9a-f-]+)`)

func novaAuditPairs(out string) []string {
	var pairs []string
	for _, m := range novaAuditRE.FindAllStringSubmatch(out, -1) {
		pairs = append(pairs, m[1]+" @ "+m[2])
	}
	sort.Strings(pairs)
	return pairs
}

func rpctlAuditPairs(t *testing.T, out string) []string {
	t.Helper()
	var pairs []string
	for _, r := range auditRows(t, out) {
		pairs = append(pairs, r.Consumer+" @ "+r.Provider)
	}
	sort.Strings(pairs)
	return pairs
}

// TestClaimsAuditParityWithNova runs Nova 26's own `nova-manage placement
// audit` (against the real placement-api) on one copy of a cloud and `rpctl
// claims audit` (on the databases) on an identical copy: the orphans found
// and deleted, the exit codes, and afterwards everything the Placement API
// says about every consumer and provider must be equal.
func TestClaimsAuditParityWithNova(t *testing.T) {
	// Waits on MariaDB, placement-api and Python: overlap with the other slow tests.
	t.Parallel()
	testdb.RequirePython(t, "nova.cmd.manage", "pymysql")
	auditParity(t, "nova-manage", nil)
}

// TestClaimsAuditParityWithNova31 is TestClaimsAuditParityWithNova against
// 2025.1's own code (issue 33's second leg): Nova 31's nova-manage
// placement audit in the release chroot on databases Nova 31's and
// Placement 13's db sync made, rpctl claims audit on databases rpctl init
// --release 2025.1 made, each served by Placement 13's placement-api.
func TestClaimsAuditParityWithNova31(t *testing.T) {
	t.Parallel()
	auditParity(t, "nova-manage (Nova 31)", testdb.ReleaseChroot(t, "2025.1"))
}

// auditParity runs the audit steps with chroot's release's nova-manage
// (nil: the host's Nova 26) on one copy and rpctl on the other.
func auditParity(t *testing.T, novaName string, chroot *testdb.Chroot) {
	t.Helper()
	novaSide, consumers := seedAuditCopy(t, true, chroot)
	rpctlSide, _ := seedAuditCopy(t, false, chroot)
	if a, b := novaSide.placementState(t, consumers), rpctlSide.placementState(t, consumers); a != b {
		t.Fatalf("the two copies differ before the test:\n%s\n%s", a, b)
	}
	steps := []struct {
		name      string
		nova      []string
		rpctl     []string
		wantCode  int
		wantPairs int
	}{
		{"report", []string{"placement", "audit", "--verbose"}, []string{"claims", "audit"}, 3, 7},
		{"one provider", []string{"placement", "audit", "--verbose", "--resource_provider", ghostUUID}, []string{"claims", "audit", "--resource_provider", ghostUUID}, 3, 1},
		{"unknown provider", []string{"placement", "audit", "--resource_provider", "c0000000-0000-4000-8000-0000000000ff"}, []string{"claims", "audit", "--provider", "c0000000-0000-4000-8000-0000000000ff"}, 127, 0},
		{"delete", []string{"placement", "audit", "--verbose", "--delete"}, []string{"claims", "audit", "--delete"}, 4, 7},
		{"after delete", []string{"placement", "audit", "--verbose"}, []string{"claims", "audit"}, 0, 0},
	}
	for _, st := range steps {
		novaOut, novaCode := novaSide.novaManage(t, st.nova...)
		rOut, rErr, rCode := cmdtest.Rpctl(t, rpctlSide.rpctlArgs(append(st.rpctl, "-f", "json")...)...)
		if novaCode != st.wantCode || rCode != st.wantCode {
			t.Errorf("%s: exit codes %s %d, rpctl %d, want %d\n%s:\n%s\nrpctl:\n%s%s", st.name, novaName, novaCode, rCode, st.wantCode, novaName, novaOut, rOut, rErr)
			continue
		}
		novaPairs := novaAuditPairs(novaOut)
		var rpctlPairs []string
		if rCode != 127 {
			rpctlPairs = rpctlAuditPairs(t, rOut)
		}
		if strings.Join(novaPairs, "\n") != strings.Join(rpctlPairs, "\n") {
			t.Errorf("%s: orphans differ\n%s:\n%s\nrpctl:\n%s", st.name, novaName, strings.Join(novaPairs, "\n"), strings.Join(rpctlPairs, "\n"))
		}
		if len(novaPairs) != st.wantPairs {
			t.Errorf("%s: %s found %d orphans, the scenario has %d:\n%s", st.name, novaName, len(novaPairs), st.wantPairs, novaOut)
		}
		if a, b := novaSide.placementState(t, consumers), rpctlSide.placementState(t, consumers); a != b {
			t.Errorf("%s: Placement differs afterwards\n%s's copy:\n%s\nrpctl's copy:\n%s", st.name, novaName, a, b)
		}
	}
}

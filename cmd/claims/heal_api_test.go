package claims_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestClaimsHealAPIBackend runs the heal parity steps with `rpctl claims
// heal` on the databases on one copy of the cloud and through the real
// Placement-api (--os-endpoint: GET and PUT /allocations/{consumer} at
// 1.28) on a twin copy, and requires the same exit codes, the same output
// and the same answers from Placement for every consumer and provider after
// each step.
func TestClaimsHealAPIBackend(t *testing.T) {
	c := newHealCloud()
	dbSide := buildHealCloud(t, c)
	apiSide := cmdtest.CloneSide(t, dbSide)
	dbSide.WriteNovaConf(t)
	// The API side's configuration names no Placement database: heal must
	// reach Placement through the API only.
	apiConf := filepath.Join(t.TempDir(), "nova.conf")
	if err := os.WriteFile(apiConf, []byte(fmt.Sprintf("[database]\nconnection = %s\n[api_database]\nconnection = %s\n",
		apiSide.Cell.URL, apiSide.API.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	newHealTwins(t, c, [2]*cmdtest.HealSide{dbSide, apiSide}, [2]string{"database", "API"}).run(t, func(st healStep) string {
		dOut, dErr, dCode := cmdtest.Rpctl(t, append([]string{"--config-file", dbSide.Conf, "claims", "heal"}, st.args...)...)
		aOut, aErr, aCode := cmdtest.Rpctl(t, append([]string{"--config-file", apiConf, "--os-endpoint", apiSide.URL, "--os-token", "admin", "claims", "heal"}, st.args...)...)
		if dCode != st.want || aCode != st.want {
			t.Errorf("%s: exit code database %d, API %d, nova-manage's %d", st.name, dCode, aCode, st.want)
		}
		if dOut != aOut {
			t.Errorf("%s: output differs", st.name)
		}
		return fmt.Sprintf("database:\n%s%s\nAPI:\n%s%s", dOut, dErr, aOut, aErr)
	})
}

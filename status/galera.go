package status

import (
	"context"
	"fmt"
	"strings"
)

// CheckDatabaseCluster is the check of the databases' Galera clusters.
const CheckDatabaseCluster = "Database Cluster"

// ClusterMember is implemented by a cell or Placement store whose database
// can be a node of a MariaDB Galera cluster.
type ClusterMember interface {
	// ClusterState returns the node's state, and false when the
	// database is not a Galera node.
	ClusterState(ctx context.Context) (ClusterState, bool, error)
}

// ClusterState is what a Galera node says of itself and its cluster.
type ClusterState struct {
	// Database names the database for messages (redacted URL).
	Database string
	// State is wsrep_local_state_comment (Synced when current).
	State string
	// Status is wsrep_cluster_status (Primary when the node's component
	// has quorum).
	Status string
	// Size is wsrep_cluster_size.
	Size string
}

// checkDatabaseCluster reports a database that is a Galera node which is
// not Synced (a joiner or donor: its reads can lag the cluster; a warning)
// or whose cluster component lost quorum (wsrep_cluster_status not
// Primary: it refuses reads and writes; a failure). Databases that are not
// Galera nodes pass; one that could not be opened leaves the check without
// a verdict, as for every check that needs it.
func (e *Env) checkDatabaseCluster(ctx context.Context) (Code, string, error) {
	errs := append([]error(nil), e.CellErrs...)
	if e.PlacementErr != nil {
		errs = append(errs, e.PlacementErr)
	}
	var members []ClusterMember
	for _, c := range e.Cells {
		if m, ok := c.(ClusterMember); ok {
			members = append(members, m)
		}
	}
	if m, ok := e.Placement.(ClusterMember); ok && e.Placement != nil {
		members = append(members, m)
	}
	code := Success
	var msgs []string
	seen := map[string]bool{}
	for _, m := range members {
		s, galera, err := m.ClusterState(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !galera || seen[s.Database] {
			continue
		}
		seen[s.Database] = true
		switch {
		case s.Status != "Primary":
			code = max(code, Failure)
			msgs = append(msgs, fmt.Sprintf("The %s is a Galera node whose cluster lost quorum (wsrep_cluster_status %s, cluster size %s): it refuses reads and writes until its component is Primary again. Point rpctl at a node of the Primary component, or restore quorum.",
				s.Database, orNone(s.Status), orNone(s.Size)))
		case s.State != "Synced":
			code = max(code, Warning)
			msgs = append(msgs, fmt.Sprintf("The %s is a Galera node that is not Synced (wsrep_local_state_comment %s): it may lag the cluster. Wait until it is Synced or point rpctl at another node.",
				s.Database, orNone(s.State)))
		}
	}
	return e.withErrors(code, strings.Join(msgs, " "), errs)
}

func orNone(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

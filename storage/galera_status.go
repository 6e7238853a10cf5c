package storage

import (
	"context"
	"database/sql"
	"strings"
)

// GaleraNode is what a Galera node says of itself and its cluster (the
// fields of status.ClusterState, which the stores convert it to).
type GaleraNode struct {
	// Database is the database's label (redacted URL).
	Database string
	// State is wsrep_local_state_comment: Synced when the node serves
	// current data; Joining, Joined, Donor/Desynced or Initialized when
	// not.
	State string
	// Status is wsrep_cluster_status: Primary when the node's component
	// has quorum; non-Primary or Disconnected when it lost it.
	Status string
	// Size is wsrep_cluster_size.
	Size string
}

// GaleraState reads the wsrep status of a database that is a Galera node;
// false means it is not one (db.Galera). It reads with wsrep_sync_wait off on its own connection: a
// causality wait on a node without quorum fails, and that node is exactly
// the one whose state status must report.
func GaleraState(ctx context.Context, db *DB) (GaleraNode, bool, error) {
	g, err := galeraState(ctx, db)
	return g, db.Galera, err
}

func galeraState(ctx context.Context, db *DB) (GaleraNode, error) {
	g := GaleraNode{Database: db.Label()}
	if !db.Galera {
		return g, nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return g, db.Errorf("read wsrep status: %w", CleanError(err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 0"); err != nil {
		return g, db.Errorf("read wsrep status: %w", CleanError(err))
	}
	// The pool gives this connection to other sessions afterwards.
	defer conn.ExecContext(context.WithoutCancel(ctx), "SET SESSION wsrep_sync_wait = "+GaleraSyncWait)
	rows, err := conn.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_status', 'wsrep_cluster_size')")
	if err != nil {
		return g, db.Errorf("read wsrep status: %w", CleanError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return g, db.Errorf("read wsrep status: %w", CleanError(err))
		}
		switch strings.ToLower(k) {
		case "wsrep_local_state_comment":
			g.State = v.String
		case "wsrep_cluster_status":
			g.Status = v.String
		case "wsrep_cluster_size":
			g.Size = v.String
		}
	}
	if err := rows.Err(); err != nil {
		return g, db.Errorf("read wsrep status: %w", CleanError(err))
	}
	return g, nil
}

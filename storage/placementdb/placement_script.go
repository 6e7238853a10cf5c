package placementdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// A compute node's providers are written in one transaction of their own,
// the unit Nova's resource tracker writes too. Sent one statement per round
// trip, 100,000 such transactions of 7 statements cost 700,000 round trips.
// Scripts keep the
// transaction per node and send many of them per round trip: each node is
// START TRANSACTION, its statements, COMMIT, then a marker SELECT with the
// node's index, so that the client knows how far the server got when a
// statement fails (the server stops the script at the first error).

// nodeScript is node k's transaction and marker as SQL, or false when the
// node cannot go in a script of creates: a provider that exists already (an
// update, a layout switch's moves: updateScript's), a parent outside the
// node, a class, trait or aggregate without an id, or a value with no
// literal that reads the same in every sql_mode. A node neither script
// takes goes through writeGroup, one transaction of its own sent statement
// by statement.
func nodeScript(w *migrate.NodeWrite, ids *migrate.PlacementIDs, now any, k int, g scriptGuard) ([]byte, bool) {
	if len(w.Moves) > 0 || len(w.Providers) == 0 {
		return nil, false
	}
	ok := true
	lit := func(b []byte, v any) []byte {
		b, good := sqlutil.AppendLiteral(b, v)
		ok = ok && good
		return b
	}
	// Each provider's id is kept in a session variable @rpN (N its index
	// in the node), and so is the root each provider belongs to.
	rp := func(b []byte, n int) []byte { return strconv.AppendInt(append(b, "@rp"...), int64(n), 10) }
	index := make(map[string]int, len(w.Providers))
	root := make([]int, len(w.Providers))
	ts := lit(nil, now)
	b := g.begin(make([]byte, 0, 1024))
	for i := range w.Providers {
		p := &w.Providers[i]
		if !p.Create || len(p.UpdateInventories) > 0 || len(p.DeleteInventories) > 0 || len(p.RemoveAggregates) > 0 || len(p.RemoveTraits) > 0 {
			return nil, false
		}
		parent, inNode := index[p.ParentUUID]
		if p.ParentUUID != "" && !inNode {
			return nil, false
		}
		index[p.UUID], root[i] = i, i
		if p.ParentUUID == "" {
			b = g.open(g.values(append(b, "INSERT INTO resource_providers (created_at, uuid, name, generation) "...)))
		} else {
			root[i] = root[parent]
			b = g.open(g.values(append(b, "INSERT INTO resource_providers (created_at, uuid, name, generation, parent_provider_id, root_provider_id) "...)))
		}
		b = append(b, ts...)
		b = lit(append(b, ", "...), p.UUID)
		b = lit(append(b, ", "...), p.Name)
		b = lit(append(b, ", "...), p.Generation)
		if p.ParentUUID != "" {
			b = rp(append(rp(append(b, ", "...), parent), ", "...), root[i])
		}
		b = append(rp(append(g.close(b), ";\nSET "...), i), " = LAST_INSERT_ID();\n"...)
		if p.ParentUUID == "" {
			// Placement's _create_in_db sets a root's root_provider_id to
			// its own id right after the insert, in the same transaction.
			b = rp(append(b, "UPDATE resource_providers SET root_provider_id = "...), i)
			b = append(g.and(rp(append(b, " WHERE id = "...), i)), ";\n"...)
		}
	}
	// rows appends one multi-row INSERT of what each provider adds, or
	// nothing when no provider adds any.
	rows := func(head string, each func(b []byte, i int, p *migrate.ProviderWrite) []byte) {
		start := len(b)
		b = g.values(append(b, head...))
		body := len(b)
		for i := range w.Providers {
			b = each(b, i, &w.Providers[i])
		}
		if len(b) == body {
			b = b[:start]
			return
		}
		b = append(b[:len(b)-len(g.sep())], ";\n"...) // the last row's separator
	}
	rows("INSERT INTO inventories (created_at, resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio) ", func(b []byte, i int, p *migrate.ProviderWrite) []byte {
		for _, rc := range slices.Sorted(maps.Keys(p.AddInventories)) {
			inv := p.AddInventories[rc]
			cid, known := ids.Classes[rc]
			ok = ok && known
			b = rp(append(append(g.open(b), ts...), ", "...), i)
			for _, x := range []any{cid, inv.Total, inv.Reserved, inv.MinUnit, inv.MaxUnit, inv.StepSize, inv.AllocationRatio} {
				b = lit(append(b, ", "...), x)
			}
			b = append(g.close(b), g.sep()...)
		}
		return b
	})
	rows("INSERT INTO resource_provider_traits (created_at, trait_id, resource_provider_id) ", func(b []byte, i int, p *migrate.ProviderWrite) []byte {
		for _, t := range p.AddTraits {
			tid, known := ids.Traits[t]
			ok = ok && known
			b = lit(append(append(g.open(b), ts...), ", "...), tid)
			b = append(g.close(rp(append(b, ", "...), i)), g.sep()...)
		}
		return b
	})
	rows("INSERT INTO resource_provider_aggregates (created_at, resource_provider_id, aggregate_id) ", func(b []byte, i int, p *migrate.ProviderWrite) []byte {
		for _, a := range p.AddAggregates {
			aid, known := ids.Aggregates[a]
			ok = ok && known
			b = rp(append(append(g.open(b), ts...), ", "...), i)
			b = append(g.close(lit(append(b, ", "...), aid)), g.sep()...)
		}
		return b
	})
	return g.commit(b, k), ok
}

// nodeProbe is the query that tells whether nodeScript's transaction for w
// committed, run in the script's session after its GTID check raised 1213
// (gtidCheckFailed): 1 when the row with the id the node's INSERT of its
// root provider got (@rp0, LAST_INSERT_ID()) is there with that uuid. An
// id is not given out twice (auto-increment values are not reused after a
// rollback, and Galera nodes take ids from disjoint series), so another
// writer's provider of the same uuid has another id, and a row with this
// one means this transaction committed; an abort that came before that
// INSERT left @rp0 holding an earlier item's id, with its own uuid. The
// providers of a node are written in one transaction, so the root's row
// stands for the whole node.
func nodeProbe(w *migrate.NodeWrite) (string, bool) {
	b, ok := sqlutil.AppendLiteral([]byte("SELECT COUNT(*) FROM resource_providers WHERE id = @rp0 AND uuid = "), w.Providers[0].UUID)
	return string(b), ok
}

// writeScripts writes the nodes listed in idx, each in its own
// transaction (scripts[k] is idx[k]'s, from nodeScript with marker k), many
// per round trip, and sets errs for them. It returns
// false, having written nothing, when the database takes no scripts.
//
// probes[k], when not empty, is a query (nodeProbe) that answers 1 when
// node k's transaction committed. It is asked when node k's GTID check
// raised 1213 (gtidCheckFailed), which happens after a COMMIT that did
// write too: without it, the retry met the node's own providers as
// another writer's (a duplicate), and the migration counted its own write
// as found done by another run.
//
// A node whose statement fails gets that error; the nodes before it have
// committed (their markers came back) and the ones after it are sent again.
// A deadlock or a lock wait timeout is retried from the failed node on,
// as storage.Retry retries a transaction; on a Galera node that includes
// the 1213 a guarded script raises after a COMMIT that a brute-force abort
// left empty (scriptGuard).
// When the connection is lost, the failed node and every later one of the
// script are in doubt: the server may have gone on past the last marker the
// client read, so they get the error wrapped with the session
// (storage.SessionError), for the caller's read-back.
func writeScripts(ctx context.Context, db *storage.DB, nodes []migrate.NodeWrite, idx []int, scripts [][]byte, probes []string, errs []error) bool {
	var c scriptConn
	defer c.release(false)
	if err := c.open(ctx, db); err != nil {
		if err == storage.ErrNoScripts {
			return false
		}
		for _, i := range idx {
			errs[i] = err
		}
		return true
	}
	from := 0 // idx[from:] are not written yet
	inDoubt := false
	err := storage.Retry(ctx, func() error {
		for from < len(idx) {
			if c.conn == nil {
				if err := c.open(ctx, db); err != nil {
					return err
				}
			}
			b := make([]byte, 0, 64<<10)
			to := from
			for to < len(idx) && (to == from || len(b) < sqlutil.MaxLiteralSQL) {
				b = append(b, scripts[to]...)
				to++
			}
			done, err := runScript(ctx, c.conn, string(b), from)
			from = done
			if err == nil {
				continue
			}
			if gtidCheckFailed(err) && probes[from] != "" && committed(ctx, c.conn, probes[from]) {
				from++ // the check was wrong: the node is written
				continue
			}
			err = db.Errorf("write compute node providers %s: %w", nodes[idx[from]].Providers[0].UUID, storage.CleanError(err))
			if storage.InDoubt(err) || ctx.Err() != nil {
				inDoubt = true
				return &storage.SessionError{Session: c.session, Err: err}
			}
			// The server refused a statement of node from and ran nothing
			// after it; the node's transaction may still be open. A
			// ROLLBACK can fail too: then the connection goes, and with
			// it the transaction, which the server rolls back when its
			// client leaves.
			if rollback(ctx, c.conn) != nil {
				c.release(true)
			}
			if storage.Retryable(err) {
				return err
			}
			if de := (*storage.DBError)(nil); errors.As(err, &de) && de.Number == aggregateCASFailed {
				err = errScriptCheck
			}
			errs[idx[from]] = markDuplicate(err)
			from++
		}
		return nil
	})
	if err != nil {
		if inDoubt {
			c.release(true)
		}
		for _, i := range idx[from:] {
			errs[i] = err
		}
	}
	return true
}

// errScriptCheck is a node whose script stopped at a failed check
// (updateScript): WriteNodes writes it again through writeGroup, whose
// error it then gets.
var errScriptCheck = errors.New("script check failed")

// scriptConn is the connection scripts are sent on and its server session.
type scriptConn struct {
	conn    *sql.Conn
	session int64
}

func (c *scriptConn) open(ctx context.Context, db *storage.DB) error {
	conn, err := db.ScriptConn(ctx)
	if err != nil {
		return err
	}
	c.conn = conn
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&c.session); err != nil {
		c.release(true)
		return db.Errorf("begin transaction: %w", storage.CleanError(err))
	}
	return nil
}

// release hands the connection back, or closes it when its transaction
// state is unknown (discard): the pool's next START TRANSACTION would
// commit whatever it left open.
func (c *scriptConn) release(discard bool) {
	if c.conn == nil {
		return
	}
	if discard {
		c.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	c.conn.Close()
	c.conn = nil
}

// runScript sends one script whose first node is number first and returns
// the number of the first node whose marker did not come back.
func runScript(ctx context.Context, conn *sql.Conn, script string, first int) (int, error) {
	done := first
	rows, err := conn.QueryContext(ctx, script)
	if err != nil {
		return done, err
	}
	defer rows.Close()
	for {
		for rows.Next() {
			var k int
			if err := rows.Scan(&k); err != nil {
				return done, err
			}
			if k != done {
				return done, fmt.Errorf("script marker %d where %d was expected", k, done)
			}
			done++
		}
		if !rows.NextResultSet() {
			break
		}
	}
	return done, rows.Err()
}

// committed asks probe (one row, one count) in the session whose script
// just failed; a probe that fails answers no, and the node is then
// retried as before.
func committed(ctx context.Context, conn *sql.Conn, probe string) bool {
	var n int
	err := conn.QueryRowContext(ctx, probe).Scan(&n)
	return err == nil && n == 1
}

func rollback(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, "ROLLBACK")
	return err
}

// scriptFailed ends a batch whose script failed with err (its item's
// error, already worded): the failed transaction may still be open, so it
// is rolled back, and a connection whose ROLLBACK fails, or whose outcome
// is in doubt, goes (the server rolls it back).
func (c *scriptConn) scriptFailed(ctx context.Context, err error) error {
	if storage.InDoubt(err) || rollback(ctx, c.conn) != nil {
		c.release(true)
	}
	return err
}

// casFailed reports whether err is a script's failed generation check
// (aggregateCASFailed), which the caller words as Placement's conflict.
func casFailed(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == aggregateCASFailed
}

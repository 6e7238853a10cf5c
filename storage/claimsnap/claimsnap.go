// Package claimsnap is the claim snapshot file: the persistent-resource-claims
// design's local SQLite claim table (a `claims` table plus a one-row version
// table), which rpctl writes as a snapshot an operator can keep and compare.
//
// Every layout rpctl ever shipped is listed in steps, in order; opening a file
// runs the steps it lacks, each in its own transaction together with the
// version bump, so an interrupted upgrade leaves the file at a whole version.
// The SQL of this file format lives here rather than in storage/: it is the
// file's own layout, not one of Nova's or Placement's databases.
package claimsnap

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpctl/rpctl/claims"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// v1Resources rebuilds a resources map from the v1 columns: what a v1 file
// knew, no more.
func v1Resources(vcpus, mem, disk int64, pci string) (map[string]int64, error) {
	r := map[string]int64{}
	for rc, v := range map[string]int64{"VCPU": vcpus, "MEMORY_MB": mem, "DISK_GB": disk} {
		if v != 0 {
			r[rc] = v
		}
	}
	if pci == "" {
		return r, nil
	}
	for _, part := range strings.Split(pci, ",") {
		rc, n, ok := strings.Cut(part, "=")
		v, err := strconv.ParseInt(n, 10, 64)
		if !ok || rc == "" || err != nil {
			return nil, fmt.Errorf("pci value %q: want CLASS=N[,CLASS=N…]", pci)
		}
		r[rc] = v
	}
	return r, nil
}

// step upgrades a file from version to-1 to version to.
type step struct {
	to int
	up func(ctx context.Context, tx *sql.Tx) error
}

// steps are every layout ever shipped, oldest first. Never edit a shipped
// step: add a new one.
var steps = []step{
	{1, createV1},
	{2, upgradeV1ToV2},
}

// Current is the newest layout this rpctl writes and reads.
var Current = steps[len(steps)-1].to

const versionTable = "claims_version"

func createV1(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx,
		`CREATE TABLE claims (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			host VARCHAR(255),
			node VARCHAR(255),
			instance_uuid VARCHAR(36) NOT NULL,
			vcpus INTEGER NOT NULL DEFAULT 0,
			memory_mb INTEGER NOT NULL DEFAULT 0,
			disk_gb INTEGER NOT NULL DEFAULT 0,
			pci TEXT,
			resize_target BOOLEAN NOT NULL DEFAULT 0,
			created_at DATETIME)`,
		`CREATE INDEX claims_instance_uuid_idx ON claims (instance_uuid)`,
		`CREATE TABLE `+versionTable+` (table_name VARCHAR(64) PRIMARY KEY, version INTEGER NOT NULL)`,
		`INSERT INTO `+versionTable+` (table_name, version) VALUES ('claims', 0)`,
	)
}

func upgradeV1ToV2(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx,
		`ALTER TABLE claims ADD COLUMN provider_uuid VARCHAR(36)`,
		`ALTER TABLE claims ADD COLUMN resources TEXT NOT NULL DEFAULT '{}'`,
	); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, vcpus, memory_mb, disk_gb, COALESCE(pci, '') FROM claims`)
	if err != nil {
		return err
	}
	type fill struct {
		id  int64
		res string
	}
	var fills []fill
	for rows.Next() {
		var id, vcpus, mem, disk int64
		var pci string
		if err := rows.Scan(&id, &vcpus, &mem, &disk, &pci); err != nil {
			rows.Close()
			return err
		}
		r, err := v1Resources(vcpus, mem, disk, pci)
		if err != nil {
			rows.Close()
			return fmt.Errorf("claim id %d: %w", id, err)
		}
		b, _ := json.Marshal(r)
		fills = append(fills, fill{id, string(b)})
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range fills {
		if _, err := tx.ExecContext(ctx, `UPDATE claims SET resources = ? WHERE id = ?`, f.res, f.id); err != nil {
			return err
		}
	}
	return nil
}

func execAll(ctx context.Context, tx *sql.Tx, stmts ...string) error {
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(s)[0]+" "+strings.Fields(s)[1], err)
		}
	}
	return nil
}

// Store is an open claim file.
type Store struct {
	db   *sql.DB
	path string
	// From is the version the file had when opened (0: new file).
	From int
}

// ErrTooNew is returned for a file written by a newer rpctl.
var ErrTooNew = errors.New("claim store layout is newer than this rpctl knows")

func openDB(path string) (*sql.DB, error) {
	// Rollback journal (not WAL) keeps a snapshot one self-contained file.
	db, err := sql.Open("sqlite", "file:"+filepath.Clean(path)+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(DELETE)&_time_format=sqlite")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// Open opens (creating when missing) the claim file at path and upgrades it
// to Current.
func Open(ctx context.Context, path string) (*Store, error) {
	return openAt(ctx, path, Current)
}

// openAt opens the file and brings it up to version target (tests build old
// layouts with it).
func openAt(ctx context.Context, path string, target int) (*Store, error) {
	db, err := openDB(path)
	if err != nil {
		return nil, fmt.Errorf("claim file %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.upgrade(ctx, target); err != nil {
		db.Close()
		return nil, fmt.Errorf("claim file %s: %w", path, err)
	}
	return s, nil
}

// Version reads the file's layout version: 0 for an empty file.
func (s *Store) Version(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('claims', ?)`, versionTable).Scan(&n); err != nil {
		return 0, fmt.Errorf("not a claim file (%v)", err)
	}
	switch n {
	case 0:
		var any int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master`).Scan(&any); err != nil {
			return 0, err
		}
		if any > 0 {
			return 0, errors.New("not a claim file: a SQLite database without the claims and claims_version tables")
		}
		return 0, nil
	case 1:
		return 0, errors.New("not a claim file: claims or claims_version table missing")
	}
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT version FROM `+versionTable+` WHERE table_name = 'claims'`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("claims_version has no row for table_name 'claims' (%v)", err)
	}
	return v, nil
}

func (s *Store) upgrade(ctx context.Context, target int) error {
	v, err := s.Version(ctx)
	if err != nil {
		return err
	}
	s.From = v
	if v > Current {
		return fmt.Errorf("%w: it is version %d, this rpctl reads versions 1 to %d; use a newer rpctl", ErrTooNew, v, Current)
	}
	for _, st := range steps {
		if st.to <= v || st.to > target {
			continue
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		err = st.up(ctx, tx)
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE `+versionTable+` SET version = ? WHERE table_name = 'claims'`, st.to)
		}
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("upgrade to layout version %d: %w", st.to, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("upgrade to layout version %d: %w", st.to, err)
		}
	}
	return nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

const timeLayout = "2006-01-02 15:04:05"

// Claims reads every claim, ordered by consumer, node and provider.
func (s *Store) Claims(ctx context.Context) ([]claims.Claim, error) {
	return s.readClaims(ctx, Current)
}

// readClaims reads the claims of a file of the given layout: a layout-1
// file (read without upgrading it) has no provider_uuid and its resources
// are rebuilt from the v1 columns as upgradeV1ToV2 would.
func (s *Store) readClaims(ctx context.Context, layout int) ([]claims.Claim, error) {
	v2cols, order := "COALESCE(provider_uuid, ''), resources", "instance_uuid, node, provider_uuid, id"
	if layout == 1 {
		v2cols, order = "'', '{}'", "instance_uuid, node, id"
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, COALESCE(host, ''), COALESCE(node, ''), instance_uuid, vcpus, memory_mb, disk_gb,
		COALESCE(pci, ''), resize_target, COALESCE(created_at, ''), `+v2cols+` FROM claims ORDER BY `+order)
	if err != nil {
		return nil, fmt.Errorf("claim file %s: %w", s.path, err)
	}
	defer rows.Close()
	var out []claims.Claim
	for rows.Next() {
		var c claims.Claim
		var created, res string
		if err := rows.Scan(&c.ID, &c.Host, &c.Node, &c.InstanceUUID, &c.VCPUs, &c.MemoryMB, &c.DiskGB, &c.PCI, &c.ResizeTarget, &created, &c.ProviderUUID, &res); err != nil {
			return nil, fmt.Errorf("claim file %s: %w", s.path, err)
		}
		if created != "" {
			t, err := parseTime(created)
			if err != nil {
				return nil, fmt.Errorf("claim file %s: claim id %d: created_at %q: %w", s.path, c.ID, created, err)
			}
			c.CreatedAt = t
		}
		if layout == 1 {
			if c.Resources, err = v1Resources(c.VCPUs, c.MemoryMB, c.DiskGB, c.PCI); err != nil {
				return nil, fmt.Errorf("claim file %s: claim id %d: %w", s.path, c.ID, err)
			}
		} else if err := json.Unmarshal([]byte(res), &c.Resources); err != nil {
			return nil, fmt.Errorf("claim file %s: claim id %d: resources %q: %w", s.path, c.ID, res, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func parseTime(s string) (time.Time, error) {
	for _, l := range []string{timeLayout, time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("not a time")
}

// Write writes claims to a new file at path in the Current layout. The file
// appears whole or not at all: it is built beside path and renamed over it.
func Write(ctx context.Context, path string, claims []claims.Claim) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("claim file %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	os.Remove(tmpPath)
	defer os.Remove(tmpPath)
	s, err := Open(ctx, tmpPath)
	if err != nil {
		return err
	}
	if err := s.insert(ctx, claims); err != nil {
		s.Close()
		return fmt.Errorf("claim file %s: %w", path, err)
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("claim file %s: %w", path, err)
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return fmt.Errorf("claim file %s: %w", path, err)
	}
	return nil
}

func (s *Store) insert(ctx context.Context, claims []claims.Claim) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO claims (host, node, instance_uuid, vcpus, memory_mb, disk_gb, pci, resize_target, created_at, provider_uuid, resources)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, c := range claims {
		c.FillV1()
		res, _ := json.Marshal(c.Resources)
		if c.Resources == nil {
			res = []byte("{}")
		}
		var created any
		if !c.CreatedAt.IsZero() {
			created = c.CreatedAt.UTC().Format(timeLayout)
		}
		if _, err := st.ExecContext(ctx, nullIfEmpty(c.Host), nullIfEmpty(c.Node), c.InstanceUUID, c.VCPUs, c.MemoryMB, c.DiskGB,
			nullIfEmpty(c.PCI), c.ResizeTarget, created, nullIfEmpty(c.ProviderUUID), string(res)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

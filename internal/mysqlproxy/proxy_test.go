package mysqlproxy

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/testdb"
)

// packet is one MySQL packet: header and payload.
func packet(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// TestCounterStream feeds client streams to the counter in every split of
// their bytes into two chunks: the count may not depend on where the
// network cut the stream.
func TestCounterStream(t *testing.T) {
	caps := []byte{0x00, 0x82, 0x00, 0x00} // CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION... (no SSL, no compression)
	hello := packet(1, append(caps, make([]byte, 28)...))
	long := bytes.Repeat([]byte{'x'}, maxPayload-1)
	cases := []struct {
		name       string
		stream     [][]byte
		roundTrips int64 // besides the connection
		commands   int64
		unreadable int64
	}{
		{"handshake only", [][]byte{hello}, 1, 0, 0},
		{"handshake, auth switch answer", [][]byte{hello, packet(3, []byte("scrambled"))}, 2, 0, 0},
		{"query, ping, quit", [][]byte{hello, packet(0, []byte("\x03SELECT 1")), packet(0, []byte{0x0e}), packet(0, []byte{comQuit})}, 3, 2, 0},
		{"prepare, execute, close", [][]byte{hello, packet(0, []byte("\x16SELECT ?")), packet(0, []byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0}), packet(0, []byte{comStmtClose, 1, 0, 0, 0})}, 3, 2, 0},
		{"empty payload", [][]byte{hello, packet(0, nil)}, 2, 1, 0},
		// A query of 2^24-1 bytes and more is sent as packets of 2^24-1
		// bytes with rising sequence ids and a shorter last one.
		{"query over 16 MB", [][]byte{hello, packet(0, append([]byte{0x03}, long...)), packet(1, []byte("tail")), packet(0, []byte("\x03SELECT 2"))}, 3, 2, 0},
		{"query of exactly 16 MB", [][]byte{hello, packet(0, append([]byte{0x03}, long...)), packet(1, nil), packet(0, []byte("\x03SELECT 2"))}, 3, 2, 0},
		{"tls", [][]byte{packet(1, append([]byte{0x00, 0x8a, 0x00, 0x00}, make([]byte, 28)...)), []byte("\x16\x03\x01 random tls bytes \x00\x00\x00\x00")}, 1, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream := bytes.Join(tc.stream, nil)
			// Every cut for short streams; for long ones the cuts around
			// each packet boundary.
			var cuts []int
			if len(stream) < 2000 {
				for i := 0; i <= len(stream); i++ {
					cuts = append(cuts, i)
				}
			} else {
				at := 0
				for _, pk := range tc.stream {
					for d := -5; d <= 5; d++ {
						if at+d >= 0 && at+d <= len(stream) {
							cuts = append(cuts, at+d)
						}
					}
					at += len(pk)
				}
			}
			for _, cut := range cuts {
				p := &Proxy{}
				c := &counter{p: p}
				c.feed(stream[:cut])
				c.feed(stream[cut:])
				got := p.Counts()
				if got.RoundTrips != tc.roundTrips || got.Commands != tc.commands || got.Unreadable != tc.unreadable {
					t.Fatalf("cut at %d: %+v, want %d round trips, %d commands, %d unreadable", cut, got, tc.roundTrips, tc.commands, tc.unreadable)
				}
			}
		})
	}
}

// TestProxyCountsRealServer checks the counts against a real MariaDB for
// statement sequences whose round trips go-sql-driver documents: a text
// query is one COM_QUERY; a query with arguments (no interpolateParams) a
// COM_STMT_PREPARE and a COM_STMT_EXECUTE, its COM_STMT_CLOSE unanswered; a
// transaction BEGIN … COMMIT a COM_QUERY each; a multi-statement script one.
func TestProxyCountsRealServer(t *testing.T) {
	m := testdb.NewMySQL(t)
	cfg, err := mysql.ParseDSN(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cfg.Addr = p.Addr()
	cfg.MultiStatements = true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	ctx := context.Background()
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	// The connection: TCP (greeting), the handshake response, and an auth
	// switch answer when the server asks for another plugin; then the ping.
	var plugin string
	if err := db.QueryRowContext(ctx, "SELECT plugin FROM mysql.user WHERE user = ? AND host = '127.0.0.1'", cfg.User).Scan(&plugin); err != nil {
		t.Fatal(err)
	}
	handshake := int64(2)
	if plugin != "" && plugin != "mysql_native_password" {
		handshake = 3
	}
	// Ping 1, the plugin query 2 (prepare, execute).
	if got := p.Reset(); got.Connections != 1 || got.Commands != 3 || got.RoundTrips != handshake+3 || got.Unreadable != 0 {
		t.Fatalf("connect, ping, one query with an argument: %+v, want 1 connection, 3 commands, %d round trips", got, handshake+3)
	}
	steps := []struct {
		name string
		run  func() error
		want int64
	}{
		{"text query", func() error {
			_, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
			return err
		}, 1},
		{"query with arguments", func() error { _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?, ?)", 1, "a"); return err }, 2},
		{"rows read", func() error {
			rows, err := db.QueryContext(ctx, "SELECT id, v FROM t")
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			return rows.Close()
		}, 1},
		{"transaction", func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE t SET v = 'b' WHERE id = 1"); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (2, 'c')"); err != nil {
				return err
			}
			return tx.Commit()
		}, 4},
		{"script of 100 transactions", func() error {
			var b strings.Builder
			for i := 10; i < 110; i++ {
				fmt.Fprintf(&b, "START TRANSACTION; INSERT INTO t VALUES (%d, 'x'); COMMIT; SELECT %d;", i, i)
			}
			rows, err := db.QueryContext(ctx, b.String())
			if err != nil {
				return err
			}
			for {
				for rows.Next() {
				}
				if !rows.NextResultSet() {
					break
				}
			}
			return rows.Close()
		}, 1},
		{"failing statement", func() error {
			if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1, 'dup')"); err == nil {
				t.Error("duplicate key accepted")
			}
			return nil
		}, 1},
	}
	for i, s := range steps {
		// Delayed or not, the bytes and so the counts are the same.
		p.SetDelay(time.Duration(i%2) * time.Millisecond)
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := p.Reset(); got.RoundTrips != s.want || got.Commands != s.want || got.Connections != 0 {
			t.Errorf("%s: %+v, want %d round trips on the open connection", s.name, got, s.want)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 102 {
		t.Fatalf("rows through the proxy: %d (%v), want 102", n, err)
	}
	p.Reset()
	// Closing the pool sends COM_QUIT, which is no round trip.
	db.Close()
	if got := p.Reset(); got.RoundTrips != 0 {
		t.Errorf("close: %+v, want no round trip", got)
	}
}

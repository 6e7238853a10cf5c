// Package mysqlproxy is a TCP proxy in front of a MySQL or MariaDB server
// that counts the client's round trips exactly, by reading the MySQL
// protocol's packet headers, and can delay each direction.
//
// It exists because round trips, not the server's work, are what a
// database across the network (a Galera VIP 0.2–1 ms away) makes slow, and
// a count is what a test can assert without timing anything (issue 35).
// The delay makes the same cost visible in a benchmark.
//
// A round trip is one thing the client sends and then waits for: the TCP
// connection (answered by the server's greeting), each packet of the
// handshake, and each command. A MySQL packet is a 3-byte little-endian
// payload length, a sequence id and the payload; a client packet with
// sequence id 0 starts a command, whose first payload byte names it.
// COM_QUIT, COM_STMT_CLOSE and COM_STMT_SEND_LONG_DATA get no answer and
// are not round trips; a payload of 2^24-1 bytes is continued by the next
// packet, which is not a round trip of its own. Any other client packet
// with a sequence id other than 0 answers the server (a handshake step, an
// auth switch, a LOAD DATA LOCAL file) and waits for it: a round trip.
// Connections that switch to TLS or the compressed protocol cannot be read
// and are counted in Unreadable.
package mysqlproxy

import (
	"encoding/binary"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Commands that get no response (MySQL's COM_* bytes).
const (
	comQuit          = 0x01
	comStmtSendLong  = 0x18
	comStmtClose     = 0x19
	maxPayload       = 1<<24 - 1
	clientCompress   = 0x20
	clientSSL        = 0x800
	clientProtocol41 = 0x200
)

// Proxy forwards connections from its listener to one server.
type Proxy struct {
	ln     net.Listener
	target string
	// delay is each direction's delay in nanoseconds.
	delay atomic.Int64

	roundTrips  atomic.Int64
	commands    atomic.Int64
	connections atomic.Int64
	unreadable  atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a free port of 127.0.0.1 and forwards every connection
// to target (host:port). Close stops it.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port, which clients dial instead of the server's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetDelay delays every chunk of bytes by d in each direction (a round trip
// then costs 2d more); 0 forwards at once.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Counts is what the proxy counted since the last Reset.
type Counts struct {
	// RoundTrips is connections, handshake packets and commands: every
	// time the client sent something and waited for the answer.
	RoundTrips int64
	// Commands are the round trips of connections past their handshake.
	Commands int64
	// Connections is the connections opened.
	Connections int64
	// Unreadable is the connections that switched to TLS or compression,
	// whose later round trips were not counted.
	Unreadable int64
}

// Counts returns the counts so far.
func (p *Proxy) Counts() Counts {
	return Counts{RoundTrips: p.roundTrips.Load(), Commands: p.commands.Load(), Connections: p.connections.Load(), Unreadable: p.unreadable.Load()}
}

// Reset returns the counts so far and starts them again from zero.
func (p *Proxy) Reset() Counts {
	return Counts{RoundTrips: p.roundTrips.Swap(0), Commands: p.commands.Swap(0), Connections: p.connections.Swap(0), Unreadable: p.unreadable.Swap(0)}
}

// Close stops listening, closes every connection and waits for them.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(client) {
			return
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	p.connections.Add(1)
	p.roundTrips.Add(1) // the connection, answered by the greeting
	c := &counter{p: p}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		p.pipe(server, client, c.feed)
		server.Close()
	}()
	go func() {
		defer wg.Done()
		p.pipe(client, server, nil)
		client.Close()
	}()
	wg.Wait()
}

// chunk is bytes read from one side and when.
type chunk struct {
	at   time.Time
	data []byte
}

// pipe copies src to dst, each chunk no earlier than the delay after it
// was read, showing each chunk to inspect first. Reading goes on while a
// chunk waits, so the delay adds latency, not a bandwidth limit.
func (p *Proxy) pipe(dst, src net.Conn, inspect func([]byte)) {
	ch := make(chan chunk, 64)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				if inspect != nil {
					inspect(buf[:n])
				}
				ch <- chunk{time.Now(), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		if d := time.Duration(p.delay.Load()); d > 0 {
			waitUntil(c.at.Add(d))
		}
		if _, err := dst.Write(c.data); err != nil {
			// Drain so that the reader is not blocked on the channel.
			src.Close()
			for range ch {
			}
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// waitUntil returns at t, within tens of microseconds. time.Sleep cannot
// delay by less than about a millisecond on Linux (the runtime's timers
// wake through epoll_pwait, whose timeout is in milliseconds: measured
// 1.10 ms for a 250 µs sleep), which made "0.5 ms" round trips 2.2 ms and
// more; a nanosleep(2) is exact to its timer slack (50 µs, measured 325 µs
// for 250 µs), so it sleeps until shortly before t and yields the rest.
func waitUntil(t time.Time) {
	const slack = 100 * time.Microsecond
	for {
		left := time.Until(t)
		if left <= 0 {
			return
		}
		if left > slack {
			ts := syscall.NsecToTimespec(int64(left - slack))
			syscall.Nanosleep(&ts, nil)
			continue
		}
		runtime.Gosched()
	}
}

// counter reads the client's stream of packets.
type counter struct {
	p         *Proxy
	head      [4]byte
	nhead     int
	left      int    // payload bytes of the current packet not seen yet
	first     bool   // the current packet's first payload byte is next
	caps      []byte // the first packet's leading payload bytes (capabilities)
	packets   int    // client packets seen
	seq       byte   // the current packet's sequence id
	continued bool   // the current packet continues a maximal one
	maximal   bool   // the current packet is 2^24-1 bytes long
	dead      bool   // TLS or compression: no more counting
}

func (c *counter) feed(b []byte) {
	for len(b) > 0 && !c.dead {
		if c.left == 0 && !c.first {
			n := copy(c.head[c.nhead:], b)
			c.nhead += n
			b = b[n:]
			if c.nhead < 4 {
				return
			}
			c.nhead = 0
			length := int(c.head[0]) | int(c.head[1])<<8 | int(c.head[2])<<16
			seq := c.head[3]
			c.continued = c.maximal
			c.maximal = length == maxPayload
			c.packets++
			c.left = length
			c.first = true
			if length == 0 {
				c.first = false
				c.count(seq, -1)
			}
			c.seq = seq
			continue
		}
		if c.first {
			c.first = false
			c.count(c.seq, int(b[0]))
		}
		if c.packets == 1 && len(c.caps) < 4 {
			n := min(4-len(c.caps), c.left, len(b))
			c.caps = append(c.caps, b[:n]...)
			if len(c.caps) == 4 {
				flags := binary.LittleEndian.Uint32(c.caps)
				if flags&clientProtocol41 != 0 && flags&(clientSSL|clientCompress) != 0 {
					// The client asks for TLS or compression: the
					// rest of the stream is not packets we can read.
					c.dead = true
					c.p.unreadable.Add(1)
					return
				}
			}
		}
		n := min(c.left, len(b))
		c.left -= n
		b = b[n:]
	}
}

// count counts a packet that starts with sequence id seq and command byte
// cmd (-1 for an empty payload).
func (c *counter) count(seq byte, cmd int) {
	if c.continued {
		return
	}
	if seq != 0 {
		// A handshake step, or an answer to the server's request.
		c.p.roundTrips.Add(1)
		return
	}
	switch cmd {
	case comQuit, comStmtClose, comStmtSendLong:
		return
	}
	c.p.roundTrips.Add(1)
	c.p.commands.Add(1)
}

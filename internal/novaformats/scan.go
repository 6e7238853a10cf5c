package novaformats

import (
	"bytes"
	"strconv"
)

// scanner reads the well-formed common case of a blob in one pass, without
// reflection and without building anything it does not return: 100,000
// compute nodes carry 230 MB of numa_topology, and encoding/json (a
// validating scan, then a reflective decode) was a fifth of `migrate
// inventory`'s CPU. It is strict: anything it is not sure encoding/json
// reads the same way (an escape in a string, a key that matches a field
// only when case is ignored, a repeated field, a float, deep nesting)
// makes it give up, and the general reader, whose verdict and messages
// stand, reads the blob instead. So it never has to explain an error.
type scanner struct {
	b     []byte
	i     int
	depth int
}

// maxScanDepth bounds the nesting the scanner follows; deeper blobs go to
// the general reader.
const maxScanDepth = 64

var nullLit = []byte("null")

// foldEqual is ASCII case-insensitive equality (the keys the scanner
// takes are ASCII), encoding/json's way of matching a key to a field.
func foldEqual(k []byte, name string) bool {
	if len(k) != len(name) {
		return false
	}
	for i := range k {
		a, b := k[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// ws skips JSON whitespace (only these four characters are).
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes a null, if that is what comes next.
func (s *scanner) null() bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], nullLit) {
		s.i += 4
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// plainString reads a string of printable ASCII without escapes: field
// names and the object names compared with constants.
func (s *scanner) plainString() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// int reads a JSON integer that fits an int64; a fraction or exponent
// (which encoding/json refuses for an integer field) gives up.
func (s *scanner) int() (int64, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - digits
	if n == 0 || (n > 1 && s.b[digits] == '0') {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return v, err == nil
}

// ints reads null (nil) or an array of integers ([] is an empty, non-nil
// slice, as encoding/json gives).
func (s *scanner) ints() ([]int64, bool) {
	if s.null() {
		return nil, true
	}
	out := []int64{}
	ok := s.array(func() bool {
		v, ok := s.int()
		out = append(out, v)
		return ok
	})
	return out, ok
}

// array calls elem for each element of an array.
func (s *scanner) array(elem func() bool) bool {
	if !s.eat('[') {
		return false
	}
	if s.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat(']')
	}
}

// object calls field for each key of an object, with the scanner on its
// value, which field must consume. known are the keys field reads: a key
// that matches one of them only when case is ignored (encoding/json would
// take it) gives up, and so does a known key given twice; any other key's
// value is checked and skipped.
func (s *scanner) object(known []string, field func(key string) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	var seen uint64
	for {
		k, ok := s.plainString()
		if !ok || !s.eat(':') {
			return false
		}
		idx := -1
		for j, name := range known {
			if string(k) == name {
				idx = j
				break
			}
			if foldEqual(k, name) {
				return false
			}
		}
		if idx >= 0 {
			if seen&(1<<idx) != 0 || !field(known[idx]) {
				return false
			}
			seen |= 1 << idx
		} else if !s.skip() {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

// skip checks and passes over any JSON value.
func (s *scanner) skip() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{' || c == '[':
		if s.depth++; s.depth > maxScanDepth {
			return false
		}
		defer func() { s.depth-- }()
		if c == '[' {
			return s.array(s.skip)
		}
		return s.object(nil, nil)
	case c == '"':
		return s.skipString()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.null()
	default:
		return s.skipNumber()
	}
}

func (s *scanner) literal(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

func (s *scanner) skipString() bool {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if s.i+4 >= len(s.b) {
					return false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				s.i += 4
			default:
				return false
			}
		}
		s.i++
	}
	return false
}

// skipNumber passes over a number in JSON's grammar.
func (s *scanner) skipNumber() bool {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	start := s.i
	if n := digits(); n == 0 || (n > 1 && s.b[start] == '0') {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// ovoObject reads an oslo.versionedobjects primitive named name; data
// reads its nova_object.data, which must be there and not null.
func (s *scanner) ovoObject(name string, data func() bool) bool {
	named, hasData := false, false
	ok := s.object(ovoKeys, func(k string) bool {
		switch k {
		case ovoName:
			v, ok := s.plainString()
			named = ok && string(v) == name
			return ok
		case ovoVersion:
			_, ok := s.plainString()
			return ok
		default:
			hasData = true
			return data()
		}
	})
	return ok && named && hasData
}

const ovoVersion = "nova_object.version"

var ovoKeys = []string{ovoName, ovoVersion, "nova_object.data"}

var cellKeys = []string{"id", "cpuset", "pcpuset", "memory", "siblings", "socket"}

// fastNUMA reads a well-formed NUMATopology primitive in one pass; ok=false
// sends the blob to the general reader.
func fastNUMA(raw []byte) ([]NUMACell, bool) {
	return ovoList(raw, "NUMATopology", "cells", (*scanner).numaCell)
}

// ovoList reads a primitive named list whose data holds one array, under
// key, of objects that elem reads (null: none) and nothing after it.
func ovoList[T any](raw []byte, list, key string, elem func(*scanner) (T, bool)) ([]T, bool) {
	s := &scanner{b: raw}
	var out []T
	ok := s.ovoObject(list, func() bool {
		return s.object([]string{key}, func(string) bool {
			if s.null() {
				return true
			}
			return s.array(func() bool {
				v, ok := elem(s)
				out = append(out, v)
				return ok
			})
		})
	})
	if !ok || !s.end() {
		return nil, false
	}
	return out, true
}

func (s *scanner) numaCell() (NUMACell, bool) {
	var c NUMACell
	var hasID, hasMem bool
	ok := s.ovoObject("NUMACell", func() bool {
		return s.object(cellKeys, func(k string) bool {
			var ok bool
			switch k {
			case "id":
				c.ID, ok = s.int()
				hasID = true
			case "cpuset":
				c.CPUs, ok = s.ints()
			case "pcpuset":
				c.PCPUs, ok = s.ints()
			case "memory":
				c.MemoryMB, ok = s.int()
				hasMem = true
			case "siblings":
				c.Cores, ok = s.countSiblings()
			default: // socket
				if s.null() {
					return true
				}
				var v int64
				v, ok = s.int()
				c.Socket = &v
			}
			return ok
		})
	})
	return c, ok && hasID && hasMem
}

// countSiblings counts the non-empty integer arrays of null or an array of
// them (the physical cores).
func (s *scanner) countSiblings() (int64, bool) {
	if s.null() {
		return 0, true
	}
	var n int64
	ok := s.array(func() bool {
		if s.null() {
			return true
		}
		empty := true
		ok := s.array(func() bool {
			_, ok := s.int()
			empty = false
			return ok
		})
		if !empty {
			n++
		}
		return ok
	})
	return n, ok
}

var poolKeys = []string{"vendor_id", "product_id", "numa_node", "count", "tags"}

// fastPCI reads a well-formed PciDevicePoolList primitive in one pass;
// ok=false sends the blob to the general reader.
func fastPCI(raw []byte) ([]PCIPool, bool) {
	return ovoList(raw, "PciDevicePoolList", "objects", (*scanner).pciPool)
}

func (s *scanner) pciPool() (PCIPool, bool) {
	p := PCIPool{Tags: map[string]string{}}
	hasCount := false
	ok := s.ovoObject("PciDevicePool", func() bool {
		return s.object(poolKeys, func(k string) bool {
			var ok bool
			switch k {
			case "vendor_id":
				p.VendorID, ok = s.text()
			case "product_id":
				p.ProductID, ok = s.text()
			case "numa_node":
				if s.null() {
					return true
				}
				var v int64
				v, ok = s.int()
				p.NUMANode = &v
			case "count":
				p.Count, ok = s.int()
				hasCount = true
			default: // tags
				ok = s.tags(p.Tags)
			}
			return ok
		})
	})
	return p, ok && hasCount
}

// text reads a plain string value.
func (s *scanner) text() (string, bool) {
	v, ok := s.plainString()
	return string(v), ok
}

// tags reads null or an object of plain strings (a null value is left
// out, as the general reader does); a key given twice gives up.
func (s *scanner) tags(into map[string]string) bool {
	if s.null() {
		return true
	}
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	seen := map[string]bool{}
	for {
		k, ok := s.text()
		if !ok || seen[k] || !s.eat(':') {
			return false
		}
		seen[k] = true
		if !s.null() {
			v, ok := s.text()
			if !ok {
				return false
			}
			into[k] = v
		}
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

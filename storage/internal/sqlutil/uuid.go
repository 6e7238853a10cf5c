package sqlutil

import "strings"

// FoldUUID is a uuid column's value as Placement and MySQL see it: a uuid
// in its canonical 8-4-4-4-12 form in any case is the same uuid to MySQL's
// case-insensitive collation and to placement-api, which stores
// str(uuid.UUID(value)) (resource_provider.create_resource_provider), lower
// case. Reading it folded is what keeps a compute node whose row spells its
// uuid upper case one provider, written as placement-api would have written
// it, and found by every comparison in Go. Any other spelling ("{...}",
// "urn:uuid:...", garbage) is returned as it is, for the row checks to name.
func FoldUUID(s string) string {
	if len(s) != 36 {
		return s
	}
	lower := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return s
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			lower = false
		default:
			return s
		}
	}
	if lower {
		return s
	}
	return strings.ToLower(s)
}

// FoldUUIDPtr is FoldUUID of a nullable column's value.
func FoldUUIDPtr(p *string) *string {
	if p == nil {
		return nil
	}
	if f := FoldUUID(*p); f != *p {
		return &f
	}
	return p
}

package candidates

// idIndex maps database ids to dense indexes. Placement's ids come from
// AUTO_INCREMENT columns, so they are usually close to 1..n: then a slice
// indexed by id answers where a map would hash (lookups by id were the
// largest part of NewModel on placement-perfload). Ids spread far beyond
// the row count fall back to a map, so memory stays proportional to the
// rows whatever the ids.
type idIndex struct {
	dense []int32 // index+1 by id; 0: absent
	m     map[int64]int32
}

// indexFor sizes the index for the ids of rows.
func indexFor[T any](rows []T, id func(*T) int64) idIndex {
	minID, maxID := rangeOf(rows, id)
	n := len(rows)
	if minID >= 0 && maxID < int64(4*n+1024) {
		return idIndex{dense: make([]int32, maxID+1)}
	}
	return idIndex{m: make(map[int64]int32, n)}
}

func (x *idIndex) set(id int64, i int32) {
	if x.m != nil {
		x.m[id] = i
		return
	}
	x.dense[id] = i + 1
}

func (x *idIndex) get(id int64) (int32, bool) {
	if x.m != nil {
		i, ok := x.m[id]
		return i, ok
	}
	if id < 0 || id >= int64(len(x.dense)) || x.dense[id] == 0 {
		return 0, false
	}
	return x.dense[id] - 1, true
}

// rangeOf returns the smallest and largest of the ids.
func rangeOf[T any](rows []T, id func(*T) int64) (lo, hi int64) {
	for i := range rows {
		v := id(&rows[i])
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

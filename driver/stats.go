package driver

// Stats describes what a store holds.
type Stats struct {
	// Releases is the number of stored revisions (heads).
	Releases int
	// HeadBytes is the size of the stored heads: release info, hooks, labels.
	HeadBytes int64
	// Parts counts distinct stored parts by kind: "chart", "values", "manifest".
	Parts map[string]int
	// PartBytes is the stored (compressed) size of all parts.
	PartBytes int64
	// RawPartBytes is the uncompressed size of all parts.
	RawPartBytes int64
}

// StoredBytes is everything the store holds for these releases, as stored.
func (s Stats) StoredBytes() int64 { return s.HeadBytes + s.PartBytes }

// TotalParts is the number of distinct stored parts of every kind.
func (s Stats) TotalParts() int {
	n := 0
	for _, c := range s.Parts {
		n += c
	}
	return n
}

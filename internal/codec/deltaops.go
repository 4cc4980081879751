package codec

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
)

// The operations of a delta rebuild its content from its base. They are a
// sequence of records, each
//
//	uvarint(n) n bytes to append        (the content's own bytes)
//	varint(off-end) uvarint(len)        (append base[off:off+len])
//
// where end is where the previous copy ended in the base (0 for the first):
// a copy that resumes just past a changed value is a small number, and the
// records compress well. The copy may be left out of the last record. Every record appends
// at least one byte, and together they append exactly the content's length.
//
// The encoder cuts both texts into tokens that end at a newline or a comma
// (lines of a manifest, members of the compact JSON of values), indexes the
// base by each pair of consecutive tokens, and walks the content: at each
// token it copies the longest run of base bytes it can find from the place
// the previous copy would continue or from an indexed place with the same
// two tokens, and takes the content's own bytes where no run is long
// enough. Linear in the sizes, a few hundred bytes for a values-only
// upgrade that changes a few lines.

// deltaMinCopy is the shortest run worth a copy (a record costs a few bytes).
const deltaMinCopy = 24

// deltaCandidates bounds the base places tried for one pair of tokens.
const deltaCandidates = 4

// deltaGoodCopy is a copy from where the previous one left off long enough
// not to look for a longer one elsewhere.
const deltaGoodCopy = 256

// maxOpsBytes bounds the operations of a delta of n bytes: the content's own
// bytes plus the records, each of which appends at least deltaMinCopy bytes
// (but the last) and costs at most 3 varints.
func maxOpsBytes(n uint64) int {
	m := n + n/2 + 1024
	if m > MaxPartBytes {
		return MaxPartBytes
	}
	return int(m)
}

// tokenEnd returns the end of the token of b starting at i: just past the
// next newline or comma, or len(b).
func tokenEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c == '\n' || c == ',' {
			return i + 1
		}
	}
	return len(b)
}

// pairEnd returns the end of the two tokens of b starting at i.
func pairEnd(b []byte, i int) int { return tokenEnd(b, tokenEnd(b, i)) }

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// deltaOps returns the operations that rebuild content from base.
func deltaOps(base, content []byte) []byte {
	seed := maphash.MakeSeed()
	index := make(map[uint64][]int32, len(base)/32+1)
	for i := 0; i < len(base); {
		end := tokenEnd(base, i)
		h := maphash.Bytes(seed, base[i:tokenEnd(base, end)])
		if c := index[h]; len(c) < deltaCandidates {
			index[h] = append(c, int32(i))
		}
		i = end
	}
	out := make([]byte, 0, 256)
	pending := 0 // start of the content bytes not yet appended or copied
	next := -1   // the base place where the previous copy would continue
	end := 0     // where the previous copy ended in the base
	for pos := 0; pos < len(content); {
		best, bestLen := -1, 0
		if next >= 0 && next < len(base) {
			best, bestLen = next, commonPrefix(base[next:], content[pos:])
		}
		if bestLen < deltaGoodCopy {
			for _, c := range index[maphash.Bytes(seed, content[pos:pairEnd(content, pos)])] {
				if l := commonPrefix(base[c:], content[pos:]); l > bestLen {
					best, bestLen = int(c), l
				}
			}
		}
		if bestLen < deltaMinCopy {
			// The content's own bytes, to the next token; the base is
			// expected to go on past its own token there.
			pos = tokenEnd(content, pos)
			if next >= 0 {
				next = tokenEnd(base, next)
			}
			continue
		}
		out = binary.AppendUvarint(out, uint64(pos-pending))
		out = append(out, content[pending:pos]...)
		out = binary.AppendVarint(out, int64(best-end))
		out = binary.AppendUvarint(out, uint64(bestLen))
		end = best + bestLen
		pos += bestLen
		pending, next = pos, best+bestLen
		if pos < len(content) && pos > 0 && content[pos-1] != '\n' && content[pos-1] != ',' {
			// The copy ended within a token (a changed value): the rest
			// of the token is the content's own; both texts resume at
			// their next token.
			pos = tokenEnd(content, pos)
			next = tokenEnd(base, next)
		}
	}
	if pending < len(content) {
		out = binary.AppendUvarint(out, uint64(len(content)-pending))
		out = append(out, content[pending:]...)
	}
	return out
}

// applyDeltaOps rebuilds the n bytes of content from ops and base, refusing
// operations that reach outside base, append nothing, or make more or less
// than n bytes.
func applyDeltaOps(ops, base []byte, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	end := int64(0) // where the previous copy ended in the base
	bad := func(what string) ([]byte, error) {
		return nil, fmt.Errorf("%w: delta operations: %s", ErrCorrupt, what)
	}
	for len(ops) > 0 {
		ins, k := binary.Uvarint(ops)
		if k <= 0 || ins > uint64(len(ops)-k) || ins > uint64(n-len(out)) {
			return bad("bad insert")
		}
		out = append(out, ops[k:k+int(ins)]...)
		ops = ops[k+int(ins):]
		if len(ops) == 0 {
			if ins == 0 {
				return bad("empty record")
			}
			break
		}
		rel, k1 := binary.Varint(ops)
		if k1 <= 0 || rel < -end || rel > int64(len(base))-end {
			return bad("bad copy offset")
		}
		off := uint64(end + rel)
		l, k2 := binary.Uvarint(ops[k1:])
		if k2 <= 0 || l > uint64(len(base))-off || l > uint64(n-len(out)) || ins+l == 0 {
			return bad("copy out of range")
		}
		out = append(out, base[off:off+l]...)
		end = int64(off + l)
		ops = ops[k1+k2:]
	}
	if len(out) != n {
		return bad(fmt.Sprintf("they make %d bytes, the delta records %d", len(out), n))
	}
	return out, nil
}

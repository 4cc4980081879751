package caswire

import "strconv"

// ChunkName names chunk i of a frame belonging to the object with the given
// UID: <uid>-<i> for a part's frame (set ""), <uid>-<set>-<i> for a head
// body stored as chunk set set. Naming chunks by their owner's UID means an
// object deleted and written again never shares chunks with its former self.
func ChunkName(owner, set string, i int) string {
	if set == "" {
		return owner + "-" + strconv.Itoa(i)
	}
	return owner + "-" + set + "-" + strconv.Itoa(i)
}

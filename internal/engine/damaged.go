package engine

import "github.com/helmstore/helmstore/internal/partcache"

// damagedMax bounds the part copies an engine remembers as damaged.
const damagedMax = 4096

// newDamagedParts returns what an engine remembers, boundedly, of the part
// copies (namespace, digest) its reads found damaged: their bytes did not
// hash to their digest or did not decode, or they could not be read whole.
// A backend cannot see such damage when it stores a reference to the part
// (it does not read a part it holds), so the next write that carries one
// of them asks its backend to write the part's bytes over the stored copy
// (driver.Part.Rewrite), and forgets it once the write succeeded. An entry
// lost to the bound costs that heal, until a read finds the damage again.
func newDamagedParts() *partcache.LRU[partKey, struct{}] {
	return partcache.NewLRU[partKey, struct{}](damagedMax)
}

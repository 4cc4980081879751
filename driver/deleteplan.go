package driver

// PlanDelete says what Backend.Delete does with the parts of h, the head it
// is about to remove: read, the parts whose frames it must read (and return)
// before removing anything, those for which have (Delete's argument) is
// false; drop, the part references it must drop with the head, one per
// digest.
//
// For a head that does not Verify, both are empty: its digests may name
// another release's parts, so only the head itself is removed. A head with
// Err that still verifies (only its labels were damaged, say) names its own
// parts: they are dropped, but not read (the engine cannot build its
// release anyway).
func PlanDelete(h *Head, have func(Digest) bool) (read, drop []PartRef) {
	if h.Verify() != nil {
		return nil, nil
	}
	seen := map[Digest]bool{}
	for _, r := range h.Parts() {
		if seen[r.Digest] {
			continue
		}
		seen[r.Digest] = true
		drop = append(drop, r)
		if h.Err == nil && !have(r.Digest) && h.Frames[r.Digest] == nil {
			read = append(read, r)
		}
	}
	return read, drop
}

package driver

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
)

// DiffParts is the change of part references when the head old is replaced
// by h (old nil: h is created). add are the parts h references and old does
// not, taken from parts (what the engine gave Create or Update), one per
// digest; drop are the references old holds and h does not, one per digest.
// Both are sorted by digest, the order in which writers should lock or
// write parts so that concurrent writers sharing parts cannot deadlock.
// A delta's base counts as a part the head references.
//
// An old head that does not Verify counts as referencing nothing (as if h
// were created): its digests may name another release's parts, whose
// references it must neither drop nor stand in for. What it really
// referenced, if anything, stays referenced (garbage, never a loss).
//
// A backend that records a head's references apart from its body (and so
// reads back an old head with digests but no body) vouches for them by
// sealing that head first (Head.Seal): its references then count.
//
// It fails, naming the parts, when parts lacks one that h newly
// references: the backend must not record a reference it has no bytes
// for (the part may be gone from the namespace since the engine saw it).
func DiffParts(old, h *Head, parts []*Part) (add []*Part, drop []PartRef, err error) {
	if old != nil && old.Verify() != nil {
		old = nil
	}
	return diffParts(old, h, parts)
}

// diffParts is DiffParts for an old head that is trusted.
func diffParts(old, h *Head, parts []*Part) (add []*Part, drop []PartRef, err error) {
	was := map[Digest]bool{}
	if old != nil {
		for _, r := range old.Parts() {
			was[r.Digest] = true
		}
	}
	now := map[Digest]bool{}
	want := map[Digest]PartRef{}
	for _, r := range h.Parts() {
		now[r.Digest] = true
		if !was[r.Digest] {
			want[r.Digest] = r
		}
	}
	for _, p := range parts {
		if _, ok := want[p.Digest]; ok {
			add = append(add, p)
			delete(want, p.Digest)
		}
	}
	if len(want) > 0 {
		var missing []string
		for _, r := range want {
			missing = append(missing, r.Kind.String()+" "+r.Digest.Short())
		}
		sort.Strings(missing)
		return nil, nil, fmt.Errorf("parts %v of release %q were not given to the backend", missing, h.Key)
	}
	if old != nil {
		seen := map[Digest]bool{}
		for _, r := range old.Parts() {
			if !now[r.Digest] && !seen[r.Digest] {
				seen[r.Digest] = true
				drop = append(drop, r)
			}
		}
	}
	slices.SortFunc(add, func(a, b *Part) int { return bytes.Compare(a.Digest[:], b.Digest[:]) })
	slices.SortFunc(drop, func(a, b PartRef) int { return bytes.Compare(a.Digest[:], b.Digest[:]) })
	return add, drop, nil
}

// Rewrites returns the parts of parts marked Rewrite that h references
// and add (what DiffParts returned) does not hold, one per digest, sorted
// by digest: parts the write keeps a reference to (an Update whose old
// head used them too) and whose stored copy it must write again. A
// backend that stores the parts of add also writes over the copies of
// those of them marked Rewrite.
func Rewrites(h *Head, add, parts []*Part) []*Part {
	skip := map[Digest]bool{}
	for _, p := range add {
		skip[p.Digest] = true
	}
	uses := map[Digest]bool{}
	for _, r := range h.Parts() {
		uses[r.Digest] = true
	}
	var out []*Part
	for _, p := range parts {
		if p.Rewrite && uses[p.Digest] && !skip[p.Digest] {
			skip[p.Digest] = true
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Part) int { return bytes.Compare(a.Digest[:], b.Digest[:]) })
	return out
}

// SameLabels reports whether the label sets a and b are equal.
func SameLabels(a, b map[string]string) bool { return maps.Equal(a, b) }

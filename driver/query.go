package driver

import (
	"cmp"
	"slices"
)

// Matches reports whether h is selected by q: every field q sets equals h's,
// and h carries every custom label q asks for with that value. A backend
// that cannot select by some field in its store (a name too long for a
// label, labels kept in a blob) selects what it can and filters the rest
// with Matches.
func (q Query) Matches(h *Head) bool {
	switch {
	case q.Namespace != "" && h.Namespace != q.Namespace,
		q.Key != "" && h.Key != q.Key,
		q.Name != "" && h.Name != q.Name,
		q.Status != "" && h.Status != q.Status,
		q.Version != nil && h.Version != *q.Version,
		q.CreatedAt != nil && h.CreatedAt != *q.CreatedAt,
		q.ModifiedAt != nil && h.ModifiedAt != *q.ModifiedAt:
		return false
	}
	for k, v := range q.Labels {
		if w, ok := h.Labels[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// CompareHeads orders heads as Backend.Heads returns them: by namespace,
// then release name, then version (numerically), then key.
func CompareHeads(a, b *Head) int {
	if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Version, b.Version); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// SortHeads sorts hs in the order Backend.Heads returns them (CompareHeads).
func SortHeads(hs []*Head) { slices.SortFunc(hs, CompareHeads) }

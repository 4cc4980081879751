package driver

import (
	"cmp"
	"slices"
	"strings"
)

// ListQuery selects the heads of a summary listing (Backend.List): what a
// dashboard or helm list shows, read from the heads' index fields alone.
// Empty and nil fields match anything.
type ListQuery struct {
	Namespace  string // "": every namespace
	NamePrefix string // release names starting with it
	// Latest keeps only the head of the highest Version of each release
	// (namespace and name), chosen among all of that release's heads
	// before Statuses and Labels apply, as helm list chooses: a release
	// whose latest revision failed is not listed by an older deployed one.
	Latest bool
	// Statuses keeps heads with one of these statuses.
	Statuses []string
	// Labels are custom labels that must all be present with these values.
	Labels map[string]string
	// After keeps heads strictly after it in CompareHeads order; with
	// Latest, releases whose namespace and name come after its own.
	After *ListCursor
	// Limit is the most heads to return (0: no limit): the first ones in
	// CompareHeads order.
	Limit int
}

// ListCursor is where a page of a listing ended: its last head.
type ListCursor struct {
	Namespace, Name string
	Version         int
}

// CursorOf returns the cursor at h.
func CursorOf(h *Head) *ListCursor {
	return &ListCursor{Namespace: h.Namespace, Name: h.Name, Version: h.Version}
}

// after reports whether h comes after c (by release only when latest).
func (c *ListCursor) after(h *Head, latest bool) bool {
	if c == nil {
		return true
	}
	if r := cmp.Compare(h.Namespace, c.Namespace); r != 0 {
		return r > 0
	}
	if r := cmp.Compare(h.Name, c.Name); r != 0 || latest {
		return r > 0
	}
	return h.Version > c.Version
}

// Select returns the heads of hs that q selects, in CompareHeads order: hs
// holds, in any order, at least every head of q.Namespace whose name has
// q.NamePrefix, and every revision of each such release (Latest is chosen
// among them). A backend whose store cannot apply some of q (the latest
// revision, a label kept in a blob) reads what its indexes give and applies
// q with Select. A head with Err is kept when its namespace and key may
// match, so that the engine reports it; Select sets its Name and Version
// from its key if they are unset. Select may reorder hs.
func (q ListQuery) Select(hs []*Head) []*Head {
	for _, h := range hs {
		if h.Err != nil && h.Name == "" {
			if n, v, err := ParseKey(h.Key); err == nil {
				h.Name, h.Version = n, v
			}
		}
	}
	if !slices.IsSortedFunc(hs, CompareHeads) {
		SortHeads(hs)
	}
	var out []*Head
	for i, h := range hs {
		switch {
		case q.Namespace != "" && h.Namespace != q.Namespace,
			!strings.HasPrefix(h.Name, q.NamePrefix),
			!q.After.after(h, q.Latest):
			continue
		}
		if q.Latest && i+1 < len(hs) && hs[i+1].Namespace == h.Namespace && hs[i+1].Name == h.Name {
			continue // a later revision of the same release follows
		}
		if h.Err == nil && !q.matches(h) {
			continue
		}
		out = append(out, h)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out
}

// matches reports whether h has one of q's statuses and all its labels.
func (q ListQuery) matches(h *Head) bool {
	if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, h.Status) {
		return false
	}
	for k, v := range q.Labels {
		if w, ok := h.Labels[k]; !ok || w != v {
			return false
		}
	}
	return true
}

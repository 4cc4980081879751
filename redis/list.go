package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/driver"
)

// listBatch is the most heads List reads in one round trip when the
// statuses or labels of a query with a limit may drop some of them.
const listBatch = 1000

// listFields are the head fields List reads: rev (read only so that HLEN
// tells whether the fields it does not read are all there) and the index
// field, which packs the index fields and the summary. Never the body or
// the digests. legacyListFields are those it reads of a head that has no
// index field (written before the index was packed, or damaged): the same
// fields unpacked, and the index field, which a write may have added since.
var (
	listFields       = []string{fRev, fIndex}
	legacyListFields = append(append([]string{fRev, fIndex}, indexItems[:]...), fSummary)
)

// listItem is one entry a listing may return: a release key, or with
// Latest the keys of one release's revisions, highest first, of which the
// first whose head exists is the entry (a key whose head is gone is a
// stale index entry, and the release's latest revision the next one).
type listItem struct {
	ns, name string
	keys     []string
	versions []int
	badKey   bool // the key is not a release key (damage)
}

// List returns the heads q selects with their summary, from the index sets
// (one pipelined round trip for every namespace): the release keys of each
// namespace (all of them; without Latest, those of the label or status
// sets), from which the release name and version come (driver.ParseKey),
// so that the latest revision, the name prefix and the cursor are chosen
// on the keys alone; then the index field (the index fields and the
// summary, packed) of the chosen heads only, with one HMGET each
// (pipelined, as many as the limit needs), never their body. Statuses and
// labels are checked on those fields. A namespace whose index set is not a
// set is read by scanning its heads, as Heads does; a head that is not a
// hash, misses a field or whose fields do not parse is returned with Err.
func (b *redisBackend) List(ctx context.Context, q driver.ListQuery) ([]*driver.Head, error) {
	nss, err := b.namespaces(ctx, q.Namespace)
	if err != nil {
		return nil, err
	}
	if q.After != nil {
		nss = slices.DeleteFunc(nss, func(ns string) bool { return ns < q.After.Namespace })
	}
	if len(nss) == 0 {
		return nil, nil
	}
	setsOf := make(map[string][]string, len(nss))
	union := !q.Latest && len(q.Labels) == 0 && len(q.Statuses) > 0
	for _, ns := range nss {
		setsOf[ns] = b.listSets(ns, q)
	}
	cmds := make([]*goredis.StringSliceCmd, len(nss))
	err = b.again(ctx, func() error {
		pipe := b.c.Pipeline()
		for i, ns := range nss {
			switch sets := setsOf[ns]; {
			case len(sets) == 1:
				cmds[i] = pipe.SMembers(ctx, sets[0])
			case union:
				cmds[i] = pipe.SUnion(ctx, sets...)
			default:
				cmds[i] = pipe.SInter(ctx, sets...)
			}
		}
		_, _ = pipe.Exec(ctx)
		return firstError(cmds)
	})
	if err != nil {
		return nil, err
	}
	var items []listItem
	for i, ns := range nss {
		keys, err := b.indexMembers(ctx, ns, cmds[i], setsOf)
		if err != nil {
			return nil, err
		}
		items = append(items, listItems(ns, keys, q)...)
	}
	statusOrLabels := len(q.Statuses) > 0 || len(q.Labels) > 0
	filter := driver.ListQuery{Statuses: q.Statuses, Labels: q.Labels}
	var out []*driver.Head
	for len(items) > 0 {
		n := len(items)
		if q.Limit > 0 {
			want := q.Limit - len(out)
			if statusOrLabels {
				want = max(want, listBatch)
			}
			n = min(n, want)
		}
		hs, err := b.listHeads(ctx, items[:n], setsOf)
		if err != nil {
			return nil, err
		}
		items = items[n:]
		if statusOrLabels {
			hs = filter.Select(hs)
		}
		for _, h := range hs {
			out = append(out, h)
			if q.Limit > 0 && len(out) == q.Limit {
				return out, nil
			}
		}
	}
	return out, nil
}

// listSets returns the index sets whose members List reads in ns: all of
// them, or without Latest, those with all of q's labels, or else with one
// of its statuses (the sets to union).
func (b *redisBackend) listSets(ns string, q driver.ListQuery) []string {
	var sets []string
	switch {
	case q.Latest:
	case len(q.Labels) > 0:
		sets = b.indexSets(ns, driver.Query{Labels: q.Labels})
	case len(q.Statuses) > 0:
		for _, s := range q.Statuses {
			sets = append(sets, b.k.status(ns, s))
		}
	}
	if len(sets) == 0 {
		sets = append(sets, b.k.all(ns))
	}
	return sets
}

// listItems returns the entries that keys, the release keys of ns, give q,
// in CompareHeads order: those with the name prefix and after the cursor,
// with Latest one per release. A key that is not a release key is an entry
// of its own (its head, if any, damaged).
func listItems(ns string, keys []string, q driver.ListQuery) []listItem {
	type parsed struct {
		key, name string
		version   int
		bad       bool
	}
	ps := make([]parsed, 0, len(keys))
	for _, k := range keys {
		name, version, err := driver.ParseKey(k)
		if !hasPrefix(name, q.NamePrefix) || !after(q.After, ns, name, version, q.Latest) {
			continue
		}
		ps = append(ps, parsed{k, name, version, err != nil})
	}
	slices.SortFunc(ps, func(a, b parsed) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.version, b.version), cmp.Compare(a.key, b.key))
	})
	var out []listItem
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		if !q.Latest || p.bad {
			out = append(out, listItem{ns: ns, name: p.name, keys: []string{p.key}, versions: []int{p.version}, badKey: p.bad})
			continue
		}
		it := listItem{ns: ns, name: p.name}
		j := i
		for j < len(ps) && ps[j].name == p.name && !ps[j].bad {
			j++
		}
		for k := j - 1; k >= i; k-- {
			it.keys = append(it.keys, ps[k].key)
			it.versions = append(it.versions, ps[k].version)
		}
		out = append(out, it)
		i = j - 1
	}
	return out
}

// after reports whether the head of name and version in ns comes after c
// (by release only when latest), as driver.ListQuery.Select does.
func after(c *driver.ListCursor, ns, name string, version int, latest bool) bool {
	if c == nil {
		return true
	}
	if r := cmp.Compare(ns, c.Namespace); r != 0 {
		return r > 0
	}
	if r := cmp.Compare(name, c.Name); r != 0 || latest {
		return r > 0
	}
	return version > c.Version
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// listHeads reads the head of each item with its summary (listFields):
// for an item whose head is gone, that of its next key, until one exists
// or none is left (the item is then dropped), each round one pipelined
// round trip. A stale index entry found so is removed from the sets it was
// read from (setsOf, nil for none), as Heads does.
func (b *redisBackend) listHeads(ctx context.Context, items []listItem, setsOf map[string][]string) ([]*driver.Head, error) {
	out := make([]*driver.Head, len(items))
	at := make([]int, len(items)) // the key of each item being read
	pending := make([]int, len(items))
	for i := range pending {
		pending[i] = i
	}
	legacy := make([]bool, len(items)) // the head read has no index field
	for len(pending) > 0 {
		fields := make([]*goredis.SliceCmd, len(pending))
		sizes := make([]*goredis.IntCmd, len(pending))
		err := b.again(ctx, func() error {
			pipe := b.c.Pipeline()
			for j, i := range pending {
				key := b.k.head(items[i].ns, items[i].keys[at[i]])
				if legacy[i] {
					fields[j] = pipe.HMGet(ctx, key, legacyListFields...)
				} else {
					fields[j] = pipe.HMGet(ctx, key, listFields...)
				}
				sizes[j] = pipe.HLen(ctx, key)
			}
			_, _ = pipe.Exec(ctx)
			return errors.Join(firstError(fields), firstError(sizes))
		})
		if err != nil {
			return nil, err
		}
		next := pending[:0]
		for j, i := range pending {
			it := &items[i]
			key := it.keys[at[i]]
			vs, err := fields[j].Result()
			if err != nil { // not a hash (firstError let only that through)
				out[i] = wrongTypeHead(it.ns, key)
				continue
			}
			size := sizes[j].Val()
			if !legacy[i] && vs[1] == nil && size > 0 {
				legacy[i] = true // read its fields unpacked in the next round
				next = append(next, i)
				continue
			}
			if h := listHead(it, at[i], legacy[i], vs, size); h != nil {
				out[i] = h
				continue
			}
			legacy[i] = false
			if sets := setsOf[it.ns]; sets != nil {
				b.prune(ctx, it.ns, key, sets)
			}
			if at[i]++; at[i] < len(it.keys) {
				next = append(next, i)
			}
		}
		pending = next
	}
	return slices.DeleteFunc(out, func(h *driver.Head) bool { return h == nil }), nil
}

// listHead builds the head of item's key at from the values of listFields
// (legacyListFields if legacy) and the number of fields of its hash (nil if
// there is no such head).
func listHead(it *listItem, at int, legacy bool, vs []interface{}, size int64) *driver.Head {
	x := &index{}
	var problems []string
	read := 0 // of the fields read, how many the hash has
	packed, hasPacked := vs[1].(string)
	switch {
	case hasPacked:
		problems = x.unpack(packed)
	case legacy:
		for i := range nItems {
			x.v[i], x.has[i] = vs[2+i].(string)
		}
		x.marker, x.hasMarker = vs[2+nItems].(string)
	}
	for _, v := range vs {
		if v != nil {
			read++
		}
	}
	if read == 0 && size == 0 {
		return nil
	}
	key := it.keys[at]
	h, p := parseIndex(it.ns, key, x)
	problems = append(problems, p...)
	// Each field written and not read is counted by HLEN: fewer fields
	// than those read plus them is one of them missing.
	if size < int64(read+len(headPartFields)) {
		problems = append(problems, fmt.Sprintf("one of the fields %v is missing", headPartFields))
	}
	switch {
	case it.badKey:
		problems = append(problems, "its key is not a release key")
	case h.Name != it.name || h.Version != it.versions[at]:
		if len(problems) == 0 {
			problems = append(problems, fmt.Sprintf("its name %q and version %d are not those of its key", h.Name, h.Version))
		}
		h.Name, h.Version = it.name, it.versions[at]
	}
	problems = append(problems, parseSummary(h, x)...)
	setProblems(h, problems)
	return h
}

// parseSummary sets h's summary from x, if it holds one (the marker),
// returning what is missing or does not parse.
func parseSummary(h *driver.Head, x *index) []string {
	if !x.hasMarker {
		return nil // written before the backend kept summaries
	}
	if x.marker != "1" {
		return []string{fmt.Sprintf("summary marker %q is not 1", x.marker)}
	}
	var problems []string
	for i, f := range summaryFields {
		if !x.has[iChartName+i] {
			problems = append(problems, fmt.Sprintf("field %s is missing", f))
		}
	}
	h.HasSummary = true
	h.ChartName, h.ChartVersion, h.AppVersion = x.v[iChartName], x.v[iChartVersion], x.v[iAppVersion]
	h.Updated, h.Description = x.v[iUpdated], x.v[iDescription]
	return problems
}

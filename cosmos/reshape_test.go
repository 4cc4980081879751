package cosmos

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/castest"
)

var _ drivertest.Reshaper = tamperer{}

// reshape is one way of damaging the shape of an item: fn edits the item's
// JSON object and reports whether it applies to it (the field it changes
// is there).
type reshape struct {
	what string
	fn   func(m map[string]any) bool
}

// field returns the object at path in m (nil if a step is missing or not
// an object).
func field(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, _ := m[p].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

// set returns a reshape setting key of the object at path to v, if the
// key is there (or always, with force).
func set(what string, v any, force bool, path []string, key string) reshape {
	return reshape{what, func(m map[string]any) bool {
		o := field(m, path...)
		if o == nil {
			return false
		}
		if _, ok := o[key]; !ok && !force {
			return false
		}
		o[key] = v
		return true
	}}
}

// drop returns a reshape removing key from the object at path, if it is
// there.
func drop(what string, path []string, key string) reshape {
	return reshape{what, func(m map[string]any) bool {
		o := field(m, path...)
		if o == nil {
			return false
		}
		if _, ok := o[key]; !ok {
			return false
		}
		delete(o, key)
		return true
	}}
}

// chunkedBody returns a reshape that makes the head item's body claim to
// be in count chunks of size bytes in all (its inline body removed).
func chunkedBody(what string, count, size float64) reshape {
	return reshape{what, func(m map[string]any) bool {
		h := field(m, "h")
		if h == nil {
			return false
		}
		cs := field(h, "bodyChunks")
		if cs == nil {
			body, _ := h["body"].(string)
			cs = map[string]any{"id": "00000000", "count": float64(1), "size": float64(len(body) * 3 / 4),
				"digest": "0000000000000000000000000000000000000000000000000000000000000000"}
		}
		if count > 0 {
			cs["count"] = count
		}
		if size > 0 {
			cs["size"] = size
		}
		delete(h, "body")
		h["bodyChunks"] = cs
		return true
	}}
}

const (
	hugeCount = float64(1 << 30)
	hugeSize  = float64(1 << 40)
)

var (
	h, p, c = []string{"h"}, []string{"p"}, []string{"c"}
	top     = []string{}
)

// headReshapes, partReshapes and chunkReshapes are the variants of each
// shape for a head item, a part item and the first chunk item of a
// chunked part.
var headReshapes = map[drivertest.Shape][]reshape{
	drivertest.WrongType: {
		set("head record replaced by a string", "not a head record", false, top, "h"),
		set("head version a string", "one", false, h, "version"),
		set("inline body a number", 12345, false, h, "body"),
		set("body chunk set a string", "many", false, h, "bodyChunks"),
		set("labels a number", 42, false, top, "l"),
		set("uid a number", 7, false, top, "uid"),
		set("chart digest a number", 99, false, h, "chart"),
	},
	drivertest.MissingField: {
		drop("head record removed", top, "h"),
		drop("head key removed", h, "key"),
		drop("uid removed", top, "uid"),
		drop("inline body removed", h, "body"),
		drop("chart digest removed", h, "chart"),
		drop("kind removed", top, "k"),
	},
	drivertest.HugeCount: {
		chunkedBody("body claims 2^30 chunks", hugeCount, 0),
	},
	drivertest.HugeSize: {
		chunkedBody("body claims 2^40 bytes in chunks", 0, hugeSize),
	},
}

var partReshapes = map[drivertest.Shape][]reshape{
	drivertest.WrongType: {
		set("part record replaced by a string", "not a part record", false, top, "p"),
		set("chunk count a string", "many", false, p, "chunks"),
		set("inline frame a number", 12345, false, p, "data"),
		set("complete a string", "yes", false, p, "complete"),
		set("referrer list a string", "nobody", false, top, "r"),
		set("referrer UIDs a number", 7, false, top, "ru"),
		set("stored size a string", "big", false, p, "storedSize"),
	},
	drivertest.MissingField: {
		drop("part record removed", top, "p"),
		drop("inline frame removed", p, "data"),
		drop("chunk count removed", p, "chunks"),
		drop("complete removed", p, "complete"),
		drop("uid removed", top, "uid"),
		drop("referrer list removed", top, "r"),
	},
	drivertest.HugeCount: {
		set("chunk count 2^30", hugeCount, true, p, "chunks"),
		reshape{"chunk count 2^30 and stored size 2^40", func(m map[string]any) bool {
			o := field(m, "p")
			if o == nil {
				return false
			}
			o["chunks"], o["storedSize"] = hugeCount, hugeSize
			return true
		}},
	},
	drivertest.HugeSize: {
		set("stored size 2^40", hugeSize, true, p, "storedSize"),
		set("canonical size 2^40", hugeSize, true, p, "size"),
	},
}

var chunkReshapes = map[drivertest.Shape][]reshape{
	drivertest.WrongType: {
		set("first chunk's record a string", "not a chunk", false, top, "c"),
		set("first chunk's index a string", "first", false, c, "index"),
		set("first chunk's data a number", 12345, false, c, "data"),
	},
	drivertest.MissingField: {
		drop("first chunk's record removed", top, "c"),
		drop("first chunk's data removed", c, "data"),
		drop("first chunk's index removed", c, "index"),
	},
}

// embeddedReshapes edit every frame of the part a head embeds (a part
// with no item of its own).
func embeddedReshapes(d string) map[drivertest.Shape][]reshape {
	each := func(what string, fn func(e map[string]any)) reshape {
		return reshape{what, func(m map[string]any) bool {
			es, _ := field(m, "h")["embedded"].([]any)
			done := false
			for _, x := range es {
				if e, _ := x.(map[string]any); e != nil && e["digest"] == d {
					fn(e)
					done = true
				}
			}
			return done
		}}
	}
	return map[drivertest.Shape][]reshape{
		drivertest.WrongType: {
			each("embedded frame a number", func(e map[string]any) { e["data"] = 12345 }),
			each("embedded digest a number", func(e map[string]any) { e["digest"] = 5 }),
		},
		drivertest.MissingField: {
			each("embedded frame removed", func(e map[string]any) { delete(e, "data") }),
		},
		drivertest.HugeSize: {
			each("embedded size 2^40", func(e map[string]any) { e["size"] = hugeSize }),
		},
	}
}

// group is items damaged alike (the heads embedding a part), with the
// variants of a shape for them.
type group struct {
	refs []cas.Ref
	ms   []map[string]any
	rs   []reshape
}

// Reshape implements drivertest.Reshaper on the items themselves: the
// head's item; or the part's item and the first of its chunks (or, for a
// part the heads embed, every head embedding it, alike). Variants are
// counted over those that apply to what the target is (an inline part has
// no chunk count to make a string of).
func (tp tamperer) Reshape(ctx context.Context, target drivertest.Target, shape drivertest.Shape, i int) (string, error) {
	var groups []group
	add := func(ref cas.Ref, rs []reshape) error {
		m, err := tp.read(ctx, ref)
		if err == nil {
			groups = append(groups, group{[]cas.Ref{ref}, []map[string]any{m}, rs})
		}
		return err
	}
	if target.Key != "" {
		if err := add(headRef(target.Namespace, target.Key), headReshapes[shape]); err != nil {
			return "", err
		}
	} else {
		ref, m, err := tp.part(ctx, target.Namespace, target.Part)
		switch {
		case err == nil:
			groups = append(groups, group{[]cas.Ref{ref}, []map[string]any{m}, partReshapes[shape]})
			if it, err := decoded(m); err == nil && it.Part != nil && it.Part.Chunks > 0 {
				cref := cas.Ref{Kind: cas.KindChunk, Namespace: target.Namespace, Name: cas.ChunkName(it.UID, "", 0)}
				if err := add(cref, chunkReshapes[shape]); err != nil {
					return "", err
				}
			}
		case errors.Is(err, cas.ErrNotFound):
			heads, err := tp.embedding(ctx, target.Namespace, target.Part)
			if err != nil {
				return "", err
			}
			if len(heads) == 0 {
				return "", fmt.Errorf("no part %s in namespace %s: %w", target.Part, target.Namespace, cas.ErrNotFound)
			}
			g := group{rs: embeddedReshapes(target.Part)[shape]}
			for _, hr := range heads {
				m, err := tp.read(ctx, hr)
				if err != nil {
					return "", err
				}
				g.refs, g.ms = append(g.refs, hr), append(g.ms, m)
			}
			groups = append(groups, g)
		default:
			return "", err
		}
	}
	for _, g := range groups {
		for _, r := range g.rs {
			if !r.fn(copyJSON(g.ms[0])) {
				continue
			}
			if i > 0 {
				i--
				continue
			}
			for j, m := range g.ms {
				if r.fn(m) {
					if err := tp.write(ctx, g.refs[j], m); err != nil {
						return "", err
					}
				}
			}
			return r.what, nil
		}
	}
	return "", drivertest.ErrNoVariant
}

// embedding returns the head items of ns that embed part d.
func (tp tamperer) embedding(ctx context.Context, ns, d string) ([]cas.Ref, error) {
	castest.WaitCommits(tp.b)
	objs, err := castest.ObjectStore(tp.b).List(ctx, cas.Selector{Kind: cas.KindHead, Namespace: ns})
	if err != nil {
		return nil, err
	}
	var out []cas.Ref
	for _, o := range objs {
		if o.Head == nil {
			continue
		}
		if _, ok := o.Head.Frame(d); ok {
			out = append(out, o.Ref())
		}
	}
	return out, nil
}

// copyJSON returns a deep copy of a decoded JSON object.
func copyJSON(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyJSON(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}

package cosmos

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

var _ drivertest.Reshaper = tamperer{}

// chunkedBody returns a reshape that makes the head item's body claim to
// be in count chunks of size bytes in all (its inline body removed).
func chunkedBody(what string, count, size float64) castest.JSONReshape {
	return castest.JSONReshape{What: what, Edit: func(m map[string]any) bool {
		h := castest.JSONField(m, "h")
		if h == nil {
			return false
		}
		cs := castest.JSONField(h, "bodyChunks")
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

var (
	h, p, c = []string{"h"}, []string{"p"}, []string{"c"}
	top     = []string{}
)

// headReshapes, partReshapes and chunkReshapes are the variants of each
// shape for a head item, a part item and the first chunk item of a
// chunked part.
var headReshapes = map[drivertest.Shape][]castest.JSONReshape{
	drivertest.WrongType: {
		castest.SetJSON("head record replaced by a string", "not a head record", false, top, "h"),
		castest.SetJSON("head version a string", "one", false, h, "version"),
		castest.SetJSON("inline body a number", 12345, false, h, "body"),
		castest.SetJSON("body chunk set a string", "many", false, h, "bodyChunks"),
		castest.SetJSON("labels a number", 42, false, top, "l"),
		castest.SetJSON("uid a number", 7, false, top, "uid"),
		castest.SetJSON("chart digest a number", 99, false, h, "chart"),
	},
	drivertest.MissingField: {
		castest.DropJSON("head record removed", top, "h"),
		castest.DropJSON("head key removed", h, "key"),
		castest.DropJSON("uid removed", top, "uid"),
		castest.DropJSON("inline body removed", h, "body"),
		castest.DropJSON("chart digest removed", h, "chart"),
		castest.DropJSON("kind removed", top, "k"),
	},
	drivertest.HugeCount: {
		chunkedBody("body claims 2^30 chunks", castest.HugeCount, 0),
	},
	drivertest.HugeSize: {
		chunkedBody("body claims 2^40 bytes in chunks", 0, castest.HugeSize),
	},
}

var partReshapes = map[drivertest.Shape][]castest.JSONReshape{
	drivertest.WrongType: {
		castest.SetJSON("part record replaced by a string", "not a part record", false, top, "p"),
		castest.SetJSON("chunk count a string", "many", false, p, "chunks"),
		castest.SetJSON("inline frame a number", 12345, false, p, "data"),
		castest.SetJSON("complete a string", "yes", false, p, "complete"),
		castest.SetJSON("referrer list a string", "nobody", false, top, "r"),
		castest.SetJSON("referrer UIDs a number", 7, false, top, "ru"),
		castest.SetJSON("stored size a string", "big", false, p, "storedSize"),
	},
	drivertest.MissingField: append(castest.PartDropReshapes(p...),
		castest.DropJSON("part record removed", top, "p"),
		castest.DropJSON("uid removed", top, "uid"),
		castest.DropJSON("referrer list removed", top, "r"),
	),
	drivertest.HugeCount: castest.PartCountReshapes(p...),
	drivertest.HugeSize:  castest.PartSizeReshapes(p...),
}

var chunkReshapes = map[drivertest.Shape][]castest.JSONReshape{
	drivertest.WrongType: {
		castest.SetJSON("first chunk's record a string", "not a chunk", false, top, "c"),
		castest.SetJSON("first chunk's index a string", "first", false, c, "index"),
		castest.SetJSON("first chunk's data a number", 12345, false, c, "data"),
	},
	drivertest.MissingField: {
		castest.DropJSON("first chunk's record removed", top, "c"),
		castest.DropJSON("first chunk's data removed", c, "data"),
		castest.DropJSON("first chunk's index removed", c, "index"),
	},
}

// embeddedReshapes edit every frame of the part a head embeds (a part
// with no item of its own).
func embeddedReshapes(d string) map[drivertest.Shape][]castest.JSONReshape {
	each := func(what string, fn func(e map[string]any)) castest.JSONReshape {
		return castest.JSONReshape{What: what, Edit: func(m map[string]any) bool {
			es, _ := castest.JSONField(m, "h")["embedded"].([]any)
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
	return map[drivertest.Shape][]castest.JSONReshape{
		drivertest.WrongType: {
			each("embedded frame a number", func(e map[string]any) { e["data"] = 12345 }),
			each("embedded digest a number", func(e map[string]any) { e["digest"] = 5 }),
		},
		drivertest.MissingField: {
			each("embedded frame removed", func(e map[string]any) { delete(e, "data") }),
		},
		drivertest.HugeSize: {
			each("embedded size 2^40", func(e map[string]any) { e["size"] = castest.HugeSize }),
		},
	}
}

// Reshape implements drivertest.Reshaper on the items themselves: the
// head's item; or the part's item and the first of its chunks (or, for a
// part the heads embed, every head embedding it, alike). Variants are
// counted over those that apply to what the target is (an inline part has
// no chunk count to make a string of).
func (tp tamperer) Reshape(ctx context.Context, target drivertest.Target, shape drivertest.Shape, i int) (string, error) {
	var groups []castest.JSONGroup
	group := func(refs []cas.Ref, ms []map[string]any, rs []castest.JSONReshape) {
		groups = append(groups, castest.JSONGroup{Objects: ms, Reshapes: rs,
			Write: func(j int) error { return tp.write(ctx, refs[j], ms[j]) }})
	}
	add := func(ref cas.Ref, rs []castest.JSONReshape) error {
		m, err := tp.read(ctx, ref)
		if err == nil {
			group([]cas.Ref{ref}, []map[string]any{m}, rs)
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
			group([]cas.Ref{ref}, []map[string]any{m}, partReshapes[shape])
			if it, err := decoded(m); err == nil && it.Part != nil && it.Part.Chunks > 0 {
				cref := cas.Ref{Kind: cas.KindChunk, Namespace: target.Namespace, Name: caswire.ChunkName(it.UID, "", 0)}
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
			var ms []map[string]any
			for _, hr := range heads {
				m, err := tp.read(ctx, hr)
				if err != nil {
					return "", err
				}
				ms = append(ms, m)
			}
			group(heads, ms, embeddedReshapes(target.Part)[shape])
		default:
			return "", err
		}
	}
	return castest.ApplyJSONReshape(groups, i)
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
		if slices.ContainsFunc(o.Head.Embedded, func(e cas.EmbeddedFrame) bool { return e.Digest == d }) {
			out = append(out, o.Ref())
		}
	}
	return out, nil
}

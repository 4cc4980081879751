package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/parallel"
)

// Parts: which a head needs, reading them from the cache or the backend,
// verifying and decoding them in parallel.

// PartError reports a part that is missing or does not verify.
type PartError struct {
	Namespace string
	Key       string // a release that references the part
	Kind      codec.Kind
	Digest    codec.Digest
	Err       error
}

func (e *PartError) Error() string {
	return fmt.Sprintf("%s part %s of release %q in namespace %q: %v", e.Kind, e.Digest, e.Key, e.Namespace, e.Err)
}

// Unwrap returns the cause (codec.ErrCorrupt for bad bytes).
func (e *PartError) Unwrap() error { return e.Err }

// ErrPartMissing is wrapped when a head references a part the store lacks.
// It wraps driver.ErrCorrupt: a part missing once a release has been read
// again is corruption.
var ErrPartMissing = fmt.Errorf("%w: part is missing from the store", codec.ErrCorrupt)

func (e *Engine[R]) decodeFrame(ref driver.PartRef, frame []byte) (*codec.Decoded, error) {
	if frame == nil {
		return nil, ErrPartMissing
	}
	return codec.OpenPart(ref.Kind, frame, ref.Digest, e.codec.DecodeChart)
}

// decodeDelta decodes the frame of the delta part ref against its base,
// decoded; baseErr says why the base is not at hand.
func (e *Engine[R]) decodeDelta(ref driver.PartRef, frame []byte, base *codec.Decoded, baseErr error) (*codec.Decoded, error) {
	if frame == nil {
		return nil, ErrPartMissing
	}
	if base == nil {
		if baseErr == nil {
			baseErr = ErrPartMissing
		}
		return nil, fmt.Errorf("its base %s: %w", ref.Base.Short(), baseErr)
	}
	if base.Kind != ref.Kind || base.Raw == nil {
		return nil, fmt.Errorf("%w: base %s is not a %s part", codec.ErrCorrupt, ref.Base.Short(), ref.Kind)
	}
	raw, err := codec.OpenDelta(frame, ref.Digest, ref.Base, base.Raw)
	if err != nil {
		return nil, err
	}
	return codec.DecodePart(ref.Kind, raw, e.codec.DecodeChart)
}

// needed returns the parts h uses that ps does not hold yet, taking those
// in the part cache from it: each of its parts and, for a delta not at
// hand, the delta's base.
func (e *Engine[R]) needed(h *driver.Head, ps *partSet) []driver.PartRef {
	var out []driver.PartRef
	want := func(ref driver.PartRef) bool {
		if _, ok := ps.got[ref.Digest]; ok {
			return false
		}
		if d, ok := e.cache.Get(ref.Digest); ok {
			ps.got[ref.Digest] = d
			return false
		}
		out = append(out, ref)
		return true
	}
	for _, k := range codec.Kinds {
		d := h.Digest(k)
		if d.IsZero() {
			continue
		}
		ref := driver.PartRef{Namespace: h.Namespace, Digest: d, Kind: k, Base: h.Base(k)}
		if want(ref) && !ref.Base.IsZero() {
			want(driver.PartRef{Namespace: h.Namespace, Digest: ref.Base, Kind: k})
		}
	}
	return out
}

// decodeRound verifies and decodes the frames of refs (one copy of each
// digest) into ps, in parallel, each delta as soon as its base is at hand:
// full parts are handed to the workers first, so a worker that takes a
// delta whose base is in this round waits for a base already being
// decoded (never for one no worker has taken). A copy that fails is
// recorded in ps.failed, and, if its own bytes failed (missing, or not
// verifying or decoding; not its base), in e.damaged for the next write
// that carries it. Parts decoded are put in the part cache if cache is
// set.
func (e *Engine[R]) decodeRound(refs []driver.PartRef, frames map[codec.Digest][]byte, ps *partSet, cache bool) {
	round := make([]driver.PartRef, 0, len(refs))
	for _, ref := range refs {
		if ref.Base.IsZero() {
			round = append(round, ref)
		}
	}
	full := len(round)
	for _, ref := range refs {
		if !ref.Base.IsZero() {
			round = append(round, ref)
		}
	}
	decoded := make([]*codec.Decoded, len(round))
	errs := make([]error, len(round))
	own := make([]bool, len(round)) // the copy's own bytes failed, not its base
	done := make([]chan struct{}, full)
	index := make(map[codec.Digest]int, full)
	for i := range full {
		done[i] = make(chan struct{})
		index[round[i].Digest] = i
	}
	parallel.Each(len(round), func(i int) {
		ref := round[i]
		if i < full {
			decoded[i], errs[i] = e.decodeFrame(ref, frames[ref.Digest])
			own[i] = errs[i] != nil
			close(done[i])
			return
		}
		// ps is not written during the round: bases from the cache or
		// an earlier round are read from it, this round's from their
		// workers.
		base, baseErr := ps.got[ref.Base], ps.failed[partKey{ref.Namespace, ref.Base}]
		if j, ok := index[ref.Base]; ok {
			<-done[j]
			if decoded[j] != nil {
				base = decoded[j]
			} else if round[j].Namespace == ref.Namespace {
				baseErr = errs[j]
			}
		}
		decoded[i], errs[i] = e.decodeDelta(ref, frames[ref.Digest], base, baseErr)
		own[i] = errs[i] != nil && (frames[ref.Digest] == nil || base != nil)
	})
	for i, ref := range round {
		if errs[i] != nil {
			ps.failed[partKey{ref.Namespace, ref.Digest}] = errs[i]
			if own[i] {
				e.damaged.Put(partKey{ref.Namespace, ref.Digest}, struct{}{})
			}
			continue
		}
		ps.got[ref.Digest] = decoded[i]
		if !cache || !e.cache.Put(ref.Digest, decoded[i]) {
			ps.own[ref.Digest] = true
		}
	}
}

// partKey names one namespace's copy of a part.
type partKey struct {
	ns string
	d  codec.Digest
}

// partSet is what load found: decoded parts by digest (a verified part is
// the same whichever namespace's copy it came from), and why each copy that
// could not be used failed.
type partSet struct {
	got    map[codec.Digest]*codec.Decoded
	failed map[partKey]error

	// own marks the parts decoded for this call that nothing else holds
	// (the cache did not keep them): their charts are built on the part's
	// own bytes, not a copy.
	own map[codec.Digest]bool

	// charts holds, per chart digest, the copy of the chart's values and
	// file bytes that the releases built from this set (one call) share.
	chartsMu sync.Mutex
	charts   map[codec.Digest]any
	// vals holds, per values digest, the copy of the values tree that the
	// releases built from this set share (values).
	vals map[codec.Digest]*codec.Decoded
}

// shared returns what the releases of this call built from chart part d
// share (ChartPart.Share): values and file bytes copied once per call, as
// Helm's Memory driver returns shared objects (never shared with another
// call or the cache: a caller that changes what one call returned never
// changes what another returns). A History of 20 revisions so makes one
// copy of the chart, not 20. A part decoded for this call alone is adopted,
// not copied.
func (ps *partSet) shared(d codec.Digest, p codec.ChartPart) any {
	ps.chartsMu.Lock()
	defer ps.chartsMu.Unlock()
	sh, ok := ps.charts[d]
	if !ok {
		if ps.own[d] {
			sh = p.Adopt()
		} else {
			sh = p.Share()
		}
		if ps.charts == nil {
			ps.charts = map[codec.Digest]any{}
		}
		ps.charts[d] = sh
	}
	return sh
}

// values returns the values part p (digest d) as the releases of this call
// share it: its tree copied once per call (a part decoded for this call
// alone is adopted), as charts are shared (shared): a List of 600
// revisions with one values file holds one copy, not 600.
func (ps *partSet) values(d codec.Digest, p *codec.Decoded) *codec.Decoded {
	ps.chartsMu.Lock()
	defer ps.chartsMu.Unlock()
	v, ok := ps.vals[d]
	if !ok {
		v = &codec.Decoded{Kind: p.Kind, Values: p.Values}
		if !ps.own[d] {
			v.Values = codec.CloneMap(p.Values)
		}
		if ps.vals == nil {
			ps.vals = map[codec.Digest]*codec.Decoded{}
		}
		ps.vals[d] = v
	}
	return v
}

func newPartSet() *partSet {
	return &partSet{got: map[codec.Digest]*codec.Decoded{}, failed: map[partKey]error{}, own: map[codec.Digest]bool{}}
}

// load returns the decoded parts of heads, from the cache where it can and
// otherwise from the backend, verified and decoded in parallel. A digest
// referenced from several namespaces is read from one of them; only if that
// copy fails is the next namespace's copy read (another round trip), so one
// namespace's missing or damaged copy never stands for another's. A part that
// fails is reported per head by assemble; load itself fails only when the
// backend does.
func (e *Engine[R]) load(ctx context.Context, heads []*driver.Head) (*partSet, error) {
	ps := newPartSet()
	want := map[codec.Digest][]driver.PartRef{} // namespaces' copies still to try
	var order []codec.Digest
	for _, h := range heads {
		if h.Err != nil {
			continue
		}
		for _, ref := range e.needed(h, ps) {
			copies, seen := want[ref.Digest]
			if !seen {
				order = append(order, ref.Digest)
			}
			dup := false
			for _, c := range copies {
				dup = dup || c.Namespace == ref.Namespace
			}
			if !dup {
				want[ref.Digest] = append(copies, ref)
			}
		}
	}
	kept := keptFrames(heads)
	for {
		var refs, read []driver.PartRef // this round's copies; those not kept by their heads
		for _, d := range order {
			if _, ok := ps.got[d]; ok {
				continue
			}
			if copies := want[d]; len(copies) > 0 {
				refs = append(refs, copies[0])
				if _, ok := kept[partKey{copies[0].Namespace, d}]; !ok {
					read = append(read, copies[0])
				}
				want[d] = copies[1:]
			}
		}
		if len(refs) == 0 {
			return ps, nil
		}
		var frames map[codec.Digest][]byte
		if len(read) > 0 {
			var err error
			if frames, err = e.backend.Parts(ctx, read); err != nil {
				return nil, err
			}
		}
		// The frames the heads hold need no round trip; they are decoded
		// in the same round as those read, which may be their bases.
		for _, r := range refs {
			if f, ok := kept[partKey{r.Namespace, r.Digest}]; ok {
				frames = withFrame(frames, r.Digest, f)
			}
		}
		e.decodeRound(refs, frames, ps, true)
	}
}

// withFrame returns frames (made if nil) with f under d.
func withFrame(frames map[codec.Digest][]byte, d codec.Digest, f []byte) map[codec.Digest][]byte {
	if frames == nil {
		frames = map[codec.Digest][]byte{}
	}
	frames[d] = f
	return frames
}

// keptFrames collects the part frames heads hold themselves (driver.Head.Frames),
// by namespace and digest.
func keptFrames(heads []*driver.Head) map[partKey][]byte {
	var out map[partKey][]byte
	for _, h := range heads {
		if h.Err != nil {
			continue
		}
		for d, f := range h.Frames {
			if out == nil {
				out = map[partKey][]byte{}
			}
			out[partKey{h.Namespace, d}] = f
		}
	}
	return out
}

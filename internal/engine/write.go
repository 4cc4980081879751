package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// Writes: Create and Update, the head a release is stored under, and the
// parts it is split into (deltas against keyframes).

// Create stores rls under key, or fails with ErrReleaseExists.
func (v *View[R]) Create(key string, rls *R) error {
	return v.write("create", key, rls)
}

// Update replaces the release stored under key, or fails with
// ErrReleaseNotFound.
func (v *View[R]) Update(key string, rls *R) error {
	return v.write("update", key, rls)
}

func (v *View[R]) write(op, key string, rls *R) error {
	ctx, cancel := v.ctx()
	defer cancel()
	return v.store(ctx, op, key, rls, v.e.now().Unix())
}

// store writes rls under key (op "create" or "update"), created or
// modified at at (unix seconds).
func (v *View[R]) store(ctx context.Context, op, key string, rls *R, at int64) error {
	h, split, err := v.head(key, rls)
	ns := v.ns
	if h != nil {
		ns = h.Namespace
	}
	if err != nil {
		return v.fail(op, ns, key, err)
	}
	mayWrite := v.e.checkPlaintext(ctx, h.Namespace) // while the parts are encoded
	parts := v.e.encodeParts(h, split)
	h.Seal(split.Body)
	if err := mayWrite(); err != nil {
		return v.fail(op, ns, key, err)
	}
	stored := make([]*driver.Part, len(parts))
	var rewritten []codec.Digest
	for i, p := range parts {
		stored[i] = p.Part
		// A copy a read found damaged is written again by this write,
		// which holds the part's bytes and has just computed their
		// digest (damaged.go).
		if _, ok := v.e.damaged.Get(partKey{h.Namespace, p.Digest}); ok {
			stored[i] = p.Part.ToRewrite()
			rewritten = append(rewritten, p.Digest)
		}
	}
	if op == "create" {
		h.CreatedAt = at
		err = v.e.backend.Create(ctx, h, stored)
	} else {
		h.ModifiedAt = at
		err = v.e.backend.Update(ctx, h, stored)
	}
	if err != nil {
		return v.fail(op, ns, key, err)
	}
	for _, d := range rewritten {
		v.e.damaged.Remove(partKey{h.Namespace, d})
	}
	v.e.noteWritten(h, split, op == "create")
	return nil
}

// encodeParts chooses how the parts of split are stored: the chart in full;
// values and manifest as a delta against the release's keyframe when that
// is small enough, otherwise in full. It sets h's part digests and bases
// and returns the parts to give the backend: each delta's base among them,
// so that the backend stores the base again, in the same write, if the
// revisions that referenced it were deleted since this store saw it.
func (e *Engine[R]) encodeParts(h *driver.Head, split *codec.Split) []*codec.Part {
	var parts []*codec.Part
	if split.Chart != nil {
		parts = append(parts, split.Chart)
	}
	h.Chart = split.Digest(codec.KindChart)
	for _, k := range []codec.Kind{codec.KindValues, codec.KindManifest} {
		p := split.Part(k)
		if p == nil {
			continue
		}
		use, base := e.delta(h, p)
		parts = append(parts, use)
		var b codec.Digest
		if base != nil {
			parts = append(parts, base)
			b = base.Digest
		}
		switch k {
		case codec.KindValues:
			h.Values, h.ValuesBase = use.Digest, b
		case codec.KindManifest:
			h.Manifest, h.ManifestBase = use.Digest, b
		}
	}
	return parts
}

// delta returns p as a delta against the keyframe of h's release, and that
// keyframe's part, if this store knows the keyframe and the delta pays;
// otherwise p itself (stored in full).
func (e *Engine[R]) delta(h *driver.Head, p *codec.Part) (use, base *codec.Part) {
	if p.Size < minDeltaBytes || p.Size > codec.MaxDeltaBytes || e.noDeltas.Load() {
		return p, nil
	}
	kf, ok := e.keyframes.get(h.Namespace, h.Name, p.Kind)
	if !ok || kf.digest == p.Digest {
		return p, nil
	}
	base = kf.part(p.Kind)
	if base.Digest != kf.digest {
		return p, nil
	}
	d, err := codec.Delta(p, base)
	if err != nil {
		return p, nil
	}
	n := len(d.Frame())
	if n*deltaSmall <= p.Size || n*deltaFraction <= len(p.Frame()) {
		return d, base
	}
	return p, nil
}

// noteWritten records the keyframes of the revision h just written: the
// base of each delta, or the full part itself. A Create always replaces
// the keyframe it was encoded with; an Update (Helm marks the revision
// before the one it just created superseded) only if no later revision's
// is known.
func (e *Engine[R]) noteWritten(h *driver.Head, split *codec.Split, create bool) {
	for _, k := range []codec.Kind{codec.KindValues, codec.KindManifest} {
		p := split.Part(k)
		if p == nil {
			continue
		}
		if base := h.Base(k); !base.IsZero() {
			if kf, ok := e.keyframes.get(h.Namespace, h.Name, k); ok && kf.digest == base {
				e.keyframes.put(h.Namespace, h.Name, k, h.Version, base, kf.raw, create)
			}
			continue
		}
		e.keyframes.put(h.Namespace, h.Name, k, h.Version, p.Digest, p.Raw(), create)
	}
}

// noteKeyframes records the keyframes of a revision read: the base of each
// delta, or the full part itself, as far as ps holds their bytes.
func (e *Engine[R]) noteKeyframes(h *driver.Head, ps *partSet) {
	for _, k := range []codec.Kind{codec.KindValues, codec.KindManifest} {
		d := h.Digest(k)
		if d.IsZero() {
			continue
		}
		if base := h.Base(k); !base.IsZero() {
			d = base
		}
		if p, ok := ps.got[d]; ok && p.Raw != nil {
			e.keyframes.put(h.Namespace, h.Name, k, h.Version, d, p.Raw, false)
		}
	}
}

// head validates rls against key and the view and builds its head, without
// part digests and body (encodeParts, then the seal).
func (v *View[R]) head(key string, rls *R) (*driver.Head, *codec.Split, error) {
	if rls == nil {
		return nil, nil, errors.New("release is nil")
	}
	name, version, err := driver.ParseKey(key)
	if err != nil {
		return nil, nil, err
	}
	m := v.e.codec.Meta(rls)
	// ParseKey takes versions from 0 (Helm's drivers store a revision 0)
	// and refuses negative ones, which Helm's Secrets driver cannot store
	// either (its version label would not be a valid label value).
	if name != m.Name || version != m.Version {
		return nil, nil, fmt.Errorf("%w: key names release %q version %d, but the release is %q version %d",
			driver.ErrInvalidKey, name, version, m.Name, m.Version)
	}
	if err := checkName(m.Name); err != nil {
		return nil, nil, err
	}
	ns := storageNamespace(v.ns, m.Namespace)
	h := &driver.Head{Namespace: ns, Key: key, Name: m.Name, Version: m.Version, Owner: driver.Owner}
	if err := checkNamespace(ns); err != nil {
		return h, nil, err
	}
	if !m.HasInfo {
		return h, nil, errors.New("release has no info (status)")
	}
	h.Status = m.Status
	if h.Labels, err = customLabels(m.Labels); err != nil {
		return h, nil, err
	}
	split, err := v.e.codec.Split(rls)
	if err != nil {
		return h, nil, err
	}
	h.ChartName, h.ChartVersion, h.AppVersion = m.ChartName, m.ChartVersion, m.AppVersion
	h.Updated, h.Description = m.Updated, m.Description
	h.HasSummary = recordReleaseNamespace(h, m.Namespace)
	return h, split, nil
}

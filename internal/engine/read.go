package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/parallel"
)

// Reads: Get, List and Query, and assembling releases from heads and
// parts.

// Get returns the release stored under key.
func (v *View[R]) Get(key string) (*R, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	if err := v.checkRead(key); err != nil {
		return nil, v.fail("get", v.ns, key, err)
	}
	for attempt := 0; ; attempt++ {
		h, err := v.find(ctx, key, v.e.cache.Empty())
		if err != nil {
			return nil, v.fail("get", v.ns, key, err)
		}
		parts, err := v.e.load(ctx, []*driver.Head{h})
		if err != nil {
			return nil, v.fail("get", h.Namespace, key, err)
		}
		rls, err := v.e.assemble(h, parts, h.Labels)
		if err == nil {
			v.e.noteKeyframes(h, parts)
			return rls, nil
		}
		// The head and its parts are two reads: a Delete or Update in between
		// can remove parts the head we read still names. Read again; a
		// part still missing then is corruption.
		if errors.Is(err, ErrPartMissing) && attempt < 3 {
			continue
		}
		return nil, v.fail("get", h.Namespace, key, err)
	}
}

// checkRead refuses a key that is not Helm's form, and reports
// ErrReleaseNotFound for a key or view namespace that no write accepts (a
// name or namespace that is not a valid Kubernetes name): no release can be
// stored there, and backends need not be asked about bytes they may compare
// loosely (trailing spaces, collations) or not at all (NUL, invalid UTF-8).
func (v *View[R]) checkRead(key string) error {
	name, _, err := driver.ParseKey(key)
	if err != nil {
		return err
	}
	if checkName(name) != nil || !v.validNamespace() {
		return driver.ErrReleaseNotFound
	}
	return nil
}

// find returns the head stored under key in the view's namespace, or in the
// one namespace that holds it for an all-namespaces view; frames is
// driver.Query.Frames.
func (v *View[R]) find(ctx context.Context, key string, frames bool) (*driver.Head, error) {
	hs, err := v.e.backend.Heads(ctx, driver.Query{Namespace: v.ns, Key: key, Frames: frames})
	if err != nil {
		return nil, err
	}
	switch len(hs) {
	case 0:
		return nil, driver.ErrReleaseNotFound
	case 1:
		return hs[0], nil
	}
	nss := make([]string, len(hs))
	for i, h := range hs {
		nss[i] = h.Namespace
	}
	return nil, fmt.Errorf("key is in %d namespaces %q: use a view scoped to one", len(hs), nss)
}

// validNamespace reports whether the view's namespace could hold releases.
func (v *View[R]) validNamespace() bool { return v.ns == "" || checkNamespace(v.ns) == nil }

// List returns every release in the view's namespace for which filter is true.
// Releases that cannot be decoded are logged and skipped, as in Helm.
func (v *View[R]) List(filter func(*R) bool) ([]*R, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	if !v.validNamespace() {
		return nil, nil
	}
	q := driver.Query{Namespace: v.ns, Frames: v.e.cache.Empty()}
	hs, err := v.e.heads(ctx, q)
	if err != nil {
		return nil, v.fail("list", v.ns, "", err)
	}
	rs, err := v.e.assembleAll(ctx, hs, q)
	if err != nil {
		return nil, v.fail("list", v.ns, "", err)
	}
	out := rs[:0]
	for _, r := range rs {
		if r != nil && filter(r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Query returns the releases whose labels (system and custom) match all of
// labels, or exactly driver.ErrReleaseNotFound when none do.
func (v *View[R]) Query(labels map[string]string) ([]*R, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	q, ok, err := buildQuery(v.ns, labels)
	if err != nil {
		return nil, v.fail("query", v.ns, "", err)
	}
	if !ok || !v.validNamespace() {
		return nil, driver.ErrReleaseNotFound
	}
	q.Frames = v.e.cache.Empty()
	hs, err := v.e.heads(ctx, q)
	if err != nil {
		return nil, v.fail("query", v.ns, "", err)
	}
	rs, err := v.e.assembleAll(ctx, hs, q)
	if err != nil {
		return nil, v.fail("query", v.ns, "", err)
	}
	out := rs[:0]
	for _, r := range rs {
		if r != nil {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

// assemble builds the release of h from decoded parts, checking that the
// head verifies (its seal over body, key and digests) and that what it holds
// is the release its key and namespace name.
func (e *Engine[R]) assemble(h *driver.Head, ps *partSet, labels map[string]string) (*R, error) {
	if h.Err != nil {
		return nil, corrupt(h, h.Err)
	}
	// driver.Head.Verify, keeping the head's JSON it opens.
	raw, err := codec.OpenHead(h)
	if errors.Is(err, driver.ErrKeyUnavailable) {
		return nil, fmt.Errorf("release %q in namespace %q: %w", h.Key, h.Namespace, err)
	}
	if err != nil {
		return nil, corrupt(h, err)
	}
	if raw, err = codec.CheckFormat(raw, e.codec.Format()); err != nil {
		return nil, corrupt(h, err)
	}
	var ds [3]*codec.Decoded
	for i, k := range codec.Kinds {
		d := h.Digest(k)
		if d.IsZero() {
			continue
		}
		p, ok := ps.got[d]
		if !ok {
			err := ps.failed[partKey{h.Namespace, d}]
			if err == nil {
				err = ErrPartMissing
			}
			return nil, &PartError{Namespace: h.Namespace, Key: h.Key, Kind: k, Digest: d, Err: err}
		}
		ds[i] = p
	}
	var chart codec.ChartPart
	var shared any
	if ds[0] != nil {
		chart = ds[0].Chart
		shared = ps.shared(h.Chart, chart)
	}
	if ds[1] != nil {
		ds[1] = ps.values(h.Values, ds[1])
	}
	rls, err := e.codec.Assemble(raw, chart, shared, ds[1], ds[2], withoutReleaseNamespace(labels))
	if err != nil {
		return nil, corrupt(h, err)
	}
	name, version, err := driver.ParseKey(h.Key)
	if err != nil {
		return nil, corrupt(h, err)
	}
	// The release's own namespace may be another than the one it is
	// stored in (storage.go).
	if n, ver, _ := e.codec.Identity(rls); n != name || ver != version {
		return nil, corrupt(h, fmt.Errorf("%w: stored data is release %q version %d", codec.ErrCorrupt, n, ver))
	}
	return rls, nil
}

// CorruptError reports a release whose stored head cannot be used.
type CorruptError struct {
	Namespace, Key string
	Err            error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("release %q in namespace %q: %v", e.Key, e.Namespace, e.Err)
}

// Unwrap returns the cause; it wraps driver.ErrCorrupt.
func (e *CorruptError) Unwrap() []error { return []error{e.Err, codec.ErrCorrupt} }

func corrupt(h *driver.Head, err error) error {
	return &CorruptError{Namespace: h.Namespace, Key: h.Key, Err: err}
}

// assembleAll loads and builds the releases of hs (the heads matching q)
// with all labels, in parallel. A release that fails is read again with q,
// since a Delete or Update may have raced the read: it is then built from its
// new head if that still matches q, or dropped. One that still cannot be
// built is logged and left nil, as Helm's drivers skip undecodable releases.
func (e *Engine[R]) assembleAll(ctx context.Context, hs []*driver.Head, q driver.Query) ([]*R, error) {
	parts, err := e.load(ctx, hs)
	if err != nil {
		return nil, err
	}
	out := make([]*R, len(hs))
	errs := make([]error, len(hs))
	parallel.Each(len(hs), func(i int) {
		if out[i], errs[i] = e.assemble(hs[i], parts, hs[i].AllLabels()); errs[i] == nil {
			e.noteKeyframes(hs[i], parts)
		}
	})
	for i, err := range errs {
		if err == nil {
			continue
		}
		rls, err := e.reread(ctx, hs[i], q)
		if err == nil {
			out[i] = rls // nil if gone or no longer matching
			continue
		}
		if !errors.Is(err, codec.ErrCorrupt) {
			return nil, err
		}
		e.cfg.Log("helmstore: skipping release %q in namespace %q that cannot be decoded: %v", hs[i].Key, hs[i].Namespace, err)
	}
	return out, nil
}

// reread reads the head of h again, as long as it still matches q, and
// builds its release: nil with no error if it is gone or no longer matches.
func (e *Engine[R]) reread(ctx context.Context, h *driver.Head, q driver.Query) (*R, error) {
	q.Namespace, q.Key = h.Namespace, h.Key
	hs, err := e.backend.Heads(ctx, q)
	if err != nil || len(hs) == 0 {
		return nil, err
	}
	parts, err := e.load(ctx, hs)
	if err != nil {
		return nil, err
	}
	rls, err := e.assemble(hs[0], parts, hs[0].AllLabels())
	if err == nil {
		e.noteKeyframes(hs[0], parts)
	}
	return rls, err
}

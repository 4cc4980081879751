package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/partcache"
)

// Engine is the shared state of a store: backend, part cache, config.
type Engine struct {
	name    string
	backend Backend
	cache   *partcache.Cache
	cfg     *driver.Config
	now     func() time.Time

	closeOnce sync.Once
	closeErr  error
}

// New returns a Store over b, scoped to driver.DefaultNamespace.
func New(b Backend, cfg *driver.Config) driver.Store {
	e := &Engine{name: cfg.Name, backend: b, cache: partcache.New(cfg.CacheBytes), cfg: cfg, now: time.Now}
	return &view{e: e, ns: driver.DefaultNamespace}
}

// view is a Store scoped to one namespace ("" = all).
type view struct {
	e  *Engine
	ns string
}

var _ driver.Store = (*view)(nil)

// Name returns the registered name of the backend.
func (v *view) Name() string { return v.e.name }

// Namespace returns a view of the same store scoped to ns.
func (v *view) Namespace(ns string) driver.Store { return &view{e: v.e, ns: ns} }

// Close closes the backend (once, whichever view closes it).
func (v *view) Close() error {
	v.e.closeOnce.Do(func() { v.e.closeErr = v.e.backend.Close() })
	return v.e.closeErr
}

// Stats reports what the view's namespace holds.
func (v *view) Stats(ctx context.Context) (driver.Stats, error) {
	return v.e.backend.Stats(ctx, v.ns)
}

// Backend returns the backend under a store made by New, for tests and
// benchmarks of the backend itself.
func BackendOf(s driver.Store) Backend {
	if v, ok := s.(*view); ok {
		return v.e.backend
	}
	return nil
}

func (v *view) ctx() (context.Context, context.CancelFunc) {
	if v.e.cfg.Timeout > 0 {
		return context.WithTimeout(context.Background(), v.e.cfg.Timeout)
	}
	return context.WithCancel(context.Background())
}

func (v *view) fail(op, ns, key string, err error) error {
	return &driver.ReleaseError{Op: op, Namespace: ns, Key: key, Err: err}
}

// Get returns the release stored under key.
func (v *view) Get(key string) (*release.Release, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	if _, _, err := ParseKey(key); err != nil {
		return nil, v.fail("get", v.ns, key, err)
	}
	for attempt := 0; ; attempt++ {
		h, err := v.find(ctx, key)
		if err != nil {
			return nil, v.fail("get", v.ns, key, err)
		}
		parts, err := v.e.load(ctx, []*Head{h})
		if err != nil {
			return nil, v.fail("get", h.Namespace, key, err)
		}
		rls, err := v.e.assemble(h, parts, h.Labels)
		if err == nil {
			return rls, nil
		}
		// Head and parts are two reads: a Delete or Update in between
		// can remove parts the head we read still names. Read again.
		if errors.Is(err, ErrPartMissing) && attempt < 3 {
			continue
		}
		return nil, v.fail("get", h.Namespace, key, err)
	}
}

// find returns the head stored under key in the view's namespace, or in the
// one namespace that holds it for an all-namespaces view.
func (v *view) find(ctx context.Context, key string) (*Head, error) {
	hs, err := v.e.backend.Heads(ctx, Query{Namespace: v.ns, Key: key})
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

// List returns every release in the view's namespace for which filter is true.
// Releases that cannot be decoded are logged and skipped, as in Helm.
func (v *view) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	hs, err := v.e.backend.Heads(ctx, Query{Namespace: v.ns})
	if err != nil {
		return nil, v.fail("list", v.ns, "", err)
	}
	rs, err := v.e.assembleAll(ctx, hs)
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
func (v *view) Query(labels map[string]string) ([]*release.Release, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	q, ok, err := buildQuery(v.ns, labels)
	if err != nil {
		return nil, v.fail("query", v.ns, "", err)
	}
	if !ok {
		return nil, driver.ErrReleaseNotFound
	}
	hs, err := v.e.backend.Heads(ctx, q)
	if err != nil {
		return nil, v.fail("query", v.ns, "", err)
	}
	rs, err := v.e.assembleAll(ctx, hs)
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

// Create stores rls under key, or fails with ErrReleaseExists.
func (v *view) Create(key string, rls *release.Release) error {
	return v.write("create", key, rls)
}

// Update replaces the release stored under key, or fails with
// ErrReleaseNotFound.
func (v *view) Update(key string, rls *release.Release) error {
	return v.write("update", key, rls)
}

func (v *view) write(op, key string, rls *release.Release) error {
	ctx, cancel := v.ctx()
	defer cancel()
	h, split, err := v.head(key, rls)
	ns := v.ns
	if h != nil {
		ns = h.Namespace
	}
	if err != nil {
		return v.fail(op, ns, key, err)
	}
	now := v.e.now().Unix()
	if op == "create" {
		h.CreatedAt = now
		err = v.e.backend.Create(ctx, h, split.Parts())
	} else {
		h.ModifiedAt = now
		err = v.e.backend.Update(ctx, h, split.Parts())
	}
	if err != nil {
		return v.fail(op, ns, key, err)
	}
	return nil
}

// head validates rls against key and the view and builds its head.
func (v *view) head(key string, rls *release.Release) (*Head, *codec.Split, error) {
	if rls == nil {
		return nil, nil, errors.New("release is nil")
	}
	name, version, err := ParseKey(key)
	if err != nil {
		return nil, nil, err
	}
	if name != rls.Name || version != rls.Version {
		return nil, nil, fmt.Errorf("%w: key names release %q version %d, but the release is %q version %d",
			driver.ErrInvalidKey, name, version, rls.Name, rls.Version)
	}
	if err := checkName(rls.Name); err != nil {
		return nil, nil, err
	}
	if rls.Version < 1 {
		return nil, nil, fmt.Errorf("invalid release version %d: versions start at 1", rls.Version)
	}
	ns := rls.Namespace
	if ns == "" {
		ns = v.ns
	}
	if ns == "" {
		ns = driver.DefaultNamespace
	}
	h := &Head{Namespace: ns, Key: key, Name: rls.Name, Version: rls.Version, Owner: Owner}
	if v.ns != "" && ns != v.ns {
		return h, nil, fmt.Errorf("release is in namespace %q but this store is scoped to namespace %q", ns, v.ns)
	}
	if err := checkNamespace(ns); err != nil {
		return h, nil, err
	}
	if rls.Info == nil {
		return h, nil, errors.New("release has no info (status)")
	}
	h.Status = rls.Info.Status.String()
	if h.Labels, err = customLabels(rls.Labels); err != nil {
		return h, nil, err
	}
	split, err := codec.SplitRelease(rls)
	if err != nil {
		return h, nil, err
	}
	h.Body = split.Body
	h.Chart, h.Values, h.Manifest = split.Digest(codec.KindChart), split.Digest(codec.KindValues), split.Digest(codec.KindManifest)
	if rls.Chart != nil && rls.Chart.Metadata != nil {
		h.ChartName, h.ChartVersion, h.AppVersion = rls.Chart.Metadata.Name, rls.Chart.Metadata.Version, rls.Chart.Metadata.AppVersion
	}
	return h, split, nil
}

// Delete removes the release stored under key and returns it.
func (v *view) Delete(key string) (*release.Release, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	if _, _, err := ParseKey(key); err != nil {
		return nil, v.fail("delete", v.ns, key, err)
	}
	ns := v.ns
	if ns == "" {
		h, err := v.find(ctx, key)
		if err != nil {
			return nil, v.fail("delete", ns, key, err)
		}
		ns = h.Namespace
	}
	have := func(d codec.Digest) bool { _, ok := v.e.cache.Get(d); return ok }
	h, frames, err := v.e.backend.Delete(ctx, ns, key, have)
	if err != nil {
		return nil, v.fail("delete", ns, key, err)
	}
	parts := map[codec.Digest]*codec.Decoded{}
	for _, ref := range h.Parts() {
		if d, ok := v.e.cache.Get(ref.Digest); ok {
			parts[ref.Digest] = d
			continue
		}
		d, err := decodeFrame(ref, frames[ref.Digest])
		if err != nil {
			return nil, v.fail("delete", ns, key, fmt.Errorf("release was deleted but cannot be returned: %w", err))
		}
		parts[ref.Digest] = d
	}
	rls, err := v.e.assemble(h, parts, h.Labels)
	if err != nil {
		return nil, v.fail("delete", ns, key, fmt.Errorf("release was deleted but cannot be returned: %w", err))
	}
	return rls, nil
}

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
var ErrPartMissing = errors.New("part is missing from the store")

func decodeFrame(ref PartRef, frame []byte) (*codec.Decoded, error) {
	if frame == nil {
		return nil, ErrPartMissing
	}
	raw, err := codec.Open(frame, ref.Digest)
	if err != nil {
		return nil, err
	}
	return codec.DecodePart(ref.Kind, raw)
}

// load returns the decoded parts of heads, from the cache where it can and
// otherwise from one backend call, verified and decoded in parallel. A part
// that fails is reported per head by assemble; load itself fails only when
// the backend does.
func (e *Engine) load(ctx context.Context, heads []*Head) (map[codec.Digest]*codec.Decoded, error) {
	got := map[codec.Digest]*codec.Decoded{}
	var refs []PartRef
	seen := map[codec.Digest]bool{}
	for _, h := range heads {
		for _, ref := range h.Parts() {
			if seen[ref.Digest] {
				continue
			}
			seen[ref.Digest] = true
			if d, ok := e.cache.Get(ref.Digest); ok {
				got[ref.Digest] = d
			} else {
				refs = append(refs, ref)
			}
		}
	}
	if len(refs) == 0 {
		return got, nil
	}
	frames, err := e.backend.Parts(ctx, refs)
	if err != nil {
		return nil, err
	}
	decoded := make([]*codec.Decoded, len(refs))
	parallel(len(refs), func(i int) {
		if d, err := decodeFrame(refs[i], frames[refs[i].Digest]); err == nil {
			decoded[i] = d
		}
	})
	for i, ref := range refs {
		if decoded[i] != nil {
			got[ref.Digest] = decoded[i]
			e.cache.Put(ref.Digest, decoded[i])
		}
	}
	return got, nil
}

// assemble builds the release of h from decoded parts.
func (e *Engine) assemble(h *Head, parts map[codec.Digest]*codec.Decoded, labels map[string]string) (*release.Release, error) {
	var ds [3]*codec.Decoded
	for i, k := range codec.Kinds {
		d := h.Digest(k)
		if d.IsZero() {
			continue
		}
		p, ok := parts[d]
		if !ok {
			// Say why: fetch the frame again is not worth it; decodeFrame
			// already ran in load. Re-run it for the message.
			return nil, &PartError{Namespace: h.Namespace, Key: h.Key, Kind: k, Digest: d, Err: e.partProblem(h, k, d)}
		}
		ds[i] = p
	}
	rls, err := codec.Assemble(h.Body, ds[0], ds[1], ds[2], labels)
	if err != nil {
		return nil, err
	}
	return rls, nil
}

// partProblem explains why a part of h could not be loaded.
func (e *Engine) partProblem(h *Head, k codec.Kind, d codec.Digest) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref := PartRef{Namespace: h.Namespace, Digest: d, Kind: k}
	frames, err := e.backend.Parts(ctx, []PartRef{ref})
	if err != nil {
		return err
	}
	if _, err := decodeFrame(ref, frames[d]); err != nil {
		return err
	}
	return errors.New("part could not be decoded")
}

// assembleAll loads and builds the releases of hs with all labels, in
// parallel. A release whose parts went missing because it was deleted or
// updated meanwhile is read again (or dropped, if gone); one that cannot be
// built is logged and left nil, as Helm's drivers skip undecodable releases.
func (e *Engine) assembleAll(ctx context.Context, hs []*Head) ([]*release.Release, error) {
	parts, err := e.load(ctx, hs)
	if err != nil {
		return nil, err
	}
	out := make([]*release.Release, len(hs))
	errs := make([]error, len(hs))
	parallel(len(hs), func(i int) {
		out[i], errs[i] = e.assemble(hs[i], parts, allLabels(hs[i]))
	})
	for i, err := range errs {
		if err == nil {
			continue
		}
		if errors.Is(err, ErrPartMissing) {
			rls, gone, err := e.reread(ctx, hs[i])
			if err != nil {
				return nil, err
			}
			if rls != nil || gone { // updated, or deleted, while we read it
				out[i] = rls
				continue
			}
		}
		e.cfg.Log("helmstore: skipping release %q in namespace %q that cannot be decoded: %v", hs[i].Key, hs[i].Namespace, errs[i])
	}
	return out, nil
}

// reread reads the head of h again and builds its release. gone reports
// that the release no longer exists; a nil release with gone false means it
// still cannot be built.
func (e *Engine) reread(ctx context.Context, h *Head) (rls *release.Release, gone bool, err error) {
	hs, err := e.backend.Heads(ctx, Query{Namespace: h.Namespace, Key: h.Key})
	if err != nil || len(hs) == 0 {
		return nil, len(hs) == 0, err
	}
	parts, err := e.load(ctx, hs)
	if err != nil {
		return nil, false, err
	}
	if rls, err = e.assemble(hs[0], parts, allLabels(hs[0])); err != nil {
		return nil, false, nil
	}
	return rls, false, nil
}

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, fn func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 2 || workers < 2 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	if workers > n {
		workers = n
	}
	var next int64 = -1
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				next++
				i := int(next)
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

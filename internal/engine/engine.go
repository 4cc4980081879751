package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/parallel"
	"github.com/helmstore/helmstore/internal/partcache"
)

// Engine is the shared state of a store: backend, part cache, config.
type Engine[R any] struct {
	codec   Codec[R]
	name    string
	backend driver.Backend
	cache   *partcache.Cache
	// keyframes are what writes take deltas against (keyframes.go).
	keyframes *keyframes
	// noDeltas, set by SetDeltas for benchmarks, stores every part full.
	noDeltas atomic.Bool
	cfg      *driver.Config
	now      func() time.Time
	// encrypts says the backend encrypts at rest (package encryption);
	// a store that does not writes nothing into an encrypted namespace
	// (plaintext.go).
	encrypts bool

	closeOnce sync.Once
	closeErr  error
}

// DefaultNamespace is the namespace of the view New returns, and of a
// release written with no namespace through an all-namespaces view, as in
// Helm's own drivers.
const DefaultNamespace = "default"

// New returns the engine over b as a view scoped to DefaultNamespace.
func New[R any](b driver.Backend, cfg *driver.Config, c Codec[R]) *View[R] {
	if cfg.Log == nil {
		c := *cfg
		c.Log = func(string, ...interface{}) {}
		cfg = &c
	}
	if len(cfg.EncryptionKeys) > 0 {
		// b encrypts from here: the engine's Config (Handle.Config) says
		// no more, so that a store made over Handle.Backend does not
		// encrypt twice.
		b = encrypted(b, cfg)
		c := *cfg
		c.EncryptionKeys = nil
		cfg = &c
	}
	e := &Engine[R]{codec: c, name: cfg.Name, backend: b, cache: partcache.New(cfg.CacheBytes), keyframes: newKeyframes(keyframeBytes), cfg: cfg, now: time.Now,
		encrypts: encrypts(b)}
	return &View[R]{e: e, ns: DefaultNamespace}
}

// View is the engine scoped to one namespace ("" = all): what a face's
// Store wraps. Its methods are Helm's driver methods.
type View[R any] struct {
	e  *Engine[R]
	ns string
}

// Name returns the registered name of the backend.
func (v *View[R]) Name() string { return v.e.name }

// Namespace returns a view of the same engine scoped to ns.
func (v *View[R]) Namespace(ns string) *View[R] { return &View[R]{e: v.e, ns: ns} }

// Close closes the backend (once, whichever view closes it).
func (v *View[R]) Close() error {
	v.e.closeOnce.Do(func() { v.e.closeErr = v.e.backend.Close() })
	return v.e.closeErr
}

// Stats reports what the view's namespace holds.
func (v *View[R]) Stats(ctx context.Context) (driver.Stats, error) {
	return v.e.backend.Stats(ctx, v.ns)
}

// SetDeltas turns delta encoding of values and manifests on (the default)
// or off, for benchmarks and measurements comparing the two. It has no
// effect on what is already stored.
func (v *View[R]) SetDeltas(on bool) { v.e.noDeltas.Store(!on) }

// Backend returns the backend under the view.
func (v *View[R]) Backend() driver.Backend { return v.e.backend }

// Config returns the configuration the engine was opened with.
func (v *View[R]) Config() *driver.Config { return v.e.cfg }

// Scope returns the view's namespace ("" for all).
func (v *View[R]) Scope() string { return v.ns }

func (v *View[R]) ctx() (context.Context, context.CancelFunc) {
	if v.e.cfg.Timeout > 0 {
		return context.WithTimeout(context.Background(), v.e.cfg.Timeout)
	}
	return context.WithCancel(context.Background())
}

// fail returns err of operation op on release key in namespace ns: a
// *driver.ReleaseError naming them, except for the two outcomes Helm's
// drivers report with their bare sentinels (not found, already exists),
// which tools compare with == (Helm's own action tests do): those are the
// bare sentinel, and their context goes to the log line instead.
func (v *View[R]) fail(op, ns, key string, err error) error {
	re := &driver.ReleaseError{Op: op, Namespace: ns, Key: key, Err: err}
	for _, s := range bareSentinels {
		if errors.Is(err, s) {
			v.e.cfg.Log("helmstore: %v", re)
			return s
		}
	}
	return re
}

// bareSentinels are the outcomes fail returns bare.
var bareSentinels = [...]error{driver.ErrReleaseNotFound, driver.ErrReleaseExists}

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
	if err := v.e.checkPlaintext(ctx, h.Namespace); err != nil {
		return v.fail(op, ns, key, err)
	}
	parts := v.e.encodeParts(h, split)
	h.Seal(split.Body)
	stored := make([]*driver.Part, len(parts))
	for i, p := range parts {
		stored[i] = p.Part
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

// Delete removes the release stored under key and returns it. A release
// whose stored data is corrupt is removed all the same; the error then wraps
// driver.ErrCorrupt and says so, and the release returned holds only what the
// store's head says (name, namespace, version, status).
func (v *View[R]) Delete(key string) (*R, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	if err := v.checkRead(key); err != nil {
		return nil, v.fail("delete", v.ns, key, err)
	}
	ns := v.ns
	if ns == "" {
		h, err := v.find(ctx, key, false)
		if err != nil {
			return nil, v.fail("delete", ns, key, err)
		}
		ns = h.Namespace
	}
	// A part the backend is told the engine holds is taken from the cache
	// there and then, into ps: other calls may push it out of the cache
	// before the release is assembled, and the backend did not send its
	// frame. (have may be called from several goroutines.)
	ps := newPartSet()
	var pinMu sync.Mutex
	have := func(d codec.Digest) bool {
		p, ok := v.e.cache.Get(d)
		if ok {
			pinMu.Lock()
			ps.got[d] = p
			pinMu.Unlock()
		}
		return ok
	}
	h, frames, err := v.e.backend.Delete(ctx, ns, key, have)
	if err != nil {
		return nil, v.fail("delete", ns, key, err)
	}
	var refs []driver.PartRef
	if h.Err == nil {
		refs = v.e.needed(h, ps)
	}
	for d, f := range h.Frames {
		frames = withFrame(frames, d, f)
	}
	v.e.decodeRound(refs, frames, ps, false)
	rls, err := v.e.assemble(h, ps, h.Labels)
	if err != nil {
		v.e.cfg.Log("helmstore: deleted release %q in namespace %q whose stored data is corrupt: %v", key, ns, err)
		return v.e.stub(h, key), v.fail("delete", ns, key, fmt.Errorf("release was deleted, but its stored data is corrupt and cannot be returned: %w", err))
	}
	return rls, nil
}

// stub is what the head of a release says about it, for a release whose
// stored data cannot be decoded.
func (e *Engine[R]) stub(h *driver.Head, key string) *R {
	name, version, _ := driver.ParseKey(key)
	return e.codec.Stub(name, version, h.Namespace, h.Status)
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
// recorded in ps.failed. Parts decoded are put in the part cache if cache
// is set.
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
	})
	for i, ref := range round {
		if errs[i] != nil {
			ps.failed[partKey{ref.Namespace, ref.Digest}] = errs[i]
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

// Handle is what the module's tests and benchmarks reach under a face's
// Store: its backend and its settings.
type Handle interface {
	Backend() driver.Backend
	// Config is the configuration the store was opened with (not to be
	// changed).
	Config() *driver.Config
	// Scope is the view's namespace ("" for all).
	Scope() string
	SetDeltas(on bool)
	// Seal seals, in place, the releases of the view's namespace that an
	// encrypting store finds in plaintext (seal.go).
	Seal(ctx context.Context, progress func(namespace, key string, err error)) (SealResult, error)
}

// Of returns the engine view under s, a face's Store, or nil if s is not
// one.
func Of(s any) Handle {
	if f, ok := s.(interface{ EngineView() Handle }); ok {
		return f.EngineView()
	}
	return nil
}

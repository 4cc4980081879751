package envelope

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// Wrap returns a backend that stores through b what the engine gives it
// with every part and head body sealed by the namespace's data key, the
// keys wrapped by ring, and every part digest replaced by its address
// (DataKey.Address): b sees no plaintext part, body or digest. Index fields
// stay readable to b, because b selects and lists by them: namespace, key,
// name, version, status, custom labels, times, and the summary (chart name
// and version, app version, updated, description). Closing the returned
// backend closes b and ring.
//
// Each stored body carries its data key, wrapped: a reader needs only the
// Keyring. A writer takes the data key of the namespace's existing heads
// (read once per namespace and process), so parts are still shared; two
// processes writing a namespace's first releases at once may each make one,
// which costs sharing between them, never correctness (every head's parts
// are sealed by the head's own key).
func Wrap(b driver.Backend, ring *Keyring) driver.Backend {
	s := &sealing{b: b, ring: ring, keys: map[[idSize]byte]*DataKey{},
		wrapped: map[[idSize]byte][]byte{}, digests: map[place]driver.Digest{}, keyOf: map[place][idSize]byte{}}
	if c, ok := b.(driver.Collector); ok {
		return &sealingCollector{s, c}
	}
	return s
}

// sealing is Wrap's backend.
type sealing struct {
	b    driver.Backend
	ring *Keyring

	mu      sync.Mutex
	keys    map[[idSize]byte]*DataKey // every data key unwrapped, by id
	wrapped map[[idSize]byte][]byte   // each write key's wrapped form, encoded
	digests map[place]driver.Digest   // address -> the digest it stands for
	keyOf   map[place][idSize]byte    // digest -> the key that addresses it
}

// place is a digest or an address in a namespace.
type place struct {
	ns string
	d  driver.Digest
}

// sealingCollector is a sealing over a backend that collects garbage.
type sealingCollector struct {
	*sealing
	driver.Collector
}

// bodyMagic is the first byte of a sealed head body: bodyMagic, the
// wrapped data key (2-byte length, then Wrapped.Encode), then a frame the
// data key sealed of the head's five part digests and its plaintext body.
const bodyMagic = codec.EncryptedBody

// IsSealedBody reports whether body, a stored head's body, is one Wrap
// sealed: the head's seal (driver.Head.Seal), then bodyMagic.
func IsSealedBody(body []byte) bool {
	const seal = 1 + sha256.Size
	return len(body) > seal && body[seal] == bodyMagic
}

// digestFields are the head's digests a sealed body keeps.
func digestFields(h *driver.Head) []*driver.Digest {
	return []*driver.Digest{&h.Chart, &h.Values, &h.Manifest, &h.ValuesBase, &h.ManifestBase}
}

func headAD(ns, key string) []byte { return []byte("head\x00" + ns + "\x00" + key) }
func partAD(ns string, a driver.Digest) []byte {
	return append([]byte("part\x00"+ns+"\x00"), a[:]...)
}

// bodyKey returns the data key a sealed body of namespace ns carries,
// unwrapping it once, and the rest of the body: the sealed frame. With
// fallback (not for the record itself), a key whose KEK the Keyring lacks
// is taken from ns's keyring record when the record holds the same data
// key under a KEK it has (Rewrap). A key wrapped by another namespace's
// KEK is driver.ErrCorrupt (Keyring.Allowed).
func (s *sealing) bodyKey(ctx context.Context, ns string, body []byte, fallback bool) (*DataKey, []byte, error) {
	enc, frame, err := splitBody(body)
	if err != nil {
		return nil, nil, err
	}
	w, err := DecodeWrapped(enc)
	if err != nil {
		return nil, nil, err
	}
	if !s.ring.Allowed(ns, w.KEK) {
		return nil, nil, corrupt("its data key is wrapped by " + w.KEK + ", another namespace's key-encryption key")
	}
	dk, err := s.unwrap(ctx, ns, w, enc)
	if err != nil {
		if !fallback || !errors.Is(err, ErrKeyUnavailable) || ctx.Err() != nil {
			return nil, nil, err
		}
		if dk = s.recordKey(ctx, ns, w.DataKey); dk == nil {
			return nil, nil, err
		}
	}
	return dk, frame, nil
}

// unwrap returns the data key w (encoded as enc) holds, unwrapped once per
// process, and remembers enc as the key's wrapped form for writes in ns
// if ns's current KEK wrapped it.
func (s *sealing) unwrap(ctx context.Context, ns string, w Wrapped, enc []byte) (*DataKey, error) {
	s.mu.Lock()
	dk := s.keys[w.DataKey]
	s.mu.Unlock()
	if dk != nil {
		return dk, nil
	}
	dk, err := s.ring.Unwrap(ctx, w)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if have := s.keys[w.DataKey]; have != nil {
		dk = have
	} else {
		s.keys[w.DataKey] = dk
	}
	if cur, err := s.ring.Current(ns); err == nil && w.KEK == cur && s.wrapped[w.DataKey] == nil {
		s.wrapped[w.DataKey] = append([]byte(nil), enc...)
	}
	return dk, nil
}

// seal returns the head and parts b stores for h and parts.
func (s *sealing) seal(ctx context.Context, h *driver.Head, parts []*driver.Part) (*driver.Head, []*driver.Part, error) {
	dk, wrapped, err := s.writeKey(ctx, h.Namespace)
	if err != nil {
		return nil, nil, err
	}
	if wrapped == nil { // a key learnt from a body wrapped by an older KEK
		w, err := s.ring.Wrap(ctx, h.Namespace, dk)
		if err != nil {
			return nil, nil, err
		}
		wrapped = w.Encode()
		s.mu.Lock()
		s.wrapped[dk.id] = wrapped
		s.mu.Unlock()
	}
	sh := *h
	if len(h.Description) > maxSealedDescription {
		// Sealed and base64'd, a failure's whole output would grow the
		// head past what some stores hold (a Cosmos DB item): the
		// listing reads such a release whole instead.
		sh.Description, sh.HasSummary = "", false
	} else {
		sh.Description = sealDescription(dk, h.Namespace, h.Key, h.Description)
	}
	plain := make([]byte, 0, 5*len(driver.Digest{})+len(h.Body))
	for _, d := range digestFields(&sh) {
		plain = append(plain, d[:]...)
		*d = s.address(dk, h.Namespace, *d)
	}
	plain = append(plain, h.Body...)
	body := wrappedBody(wrapped)
	// Sealed over the key and the addresses, as any stored head: b
	// checks it (Head.Verify) before dropping references on Delete.
	sh.Seal(append(body, dk.Seal(plain, headAD(h.Namespace, h.Key))...))
	sh.Frames = nil
	sp := make([]*driver.Part, len(parts))
	for i, p := range parts {
		a := s.address(dk, h.Namespace, p.Digest)
		q := driver.NewPart(p.Kind, a, p.Size, func() []byte { return dk.Seal(p.Frame(), partAD(h.Namespace, a)) })
		q.Base = s.address(dk, h.Namespace, p.Base)
		q.Content = s.address(dk, h.Namespace, p.Content)
		q.Rewrite = p.Rewrite
		sp[i] = q
	}
	return &sh, sp, nil
}

// address is d's address under dk in ns (zero for zero), remembered both
// ways.
func (s *sealing) address(dk *DataKey, ns string, d driver.Digest) driver.Digest {
	if d.IsZero() {
		return d
	}
	a := dk.Address(d)
	s.mu.Lock()
	s.digests[place{ns, a}] = d
	s.keyOf[place{ns, d}] = dk.id
	s.mu.Unlock()
	return a
}

// open restores, in place, a head b returned: its digests and body, and
// the frames stored with it, and returns the data key that sealed it. A
// head that does not open gets Err (driver.ErrCorrupt) for that release
// alone; a key the Keyring cannot unwrap fails the call.
func (s *sealing) open(ctx context.Context, h *driver.Head, memo frameMemo) (*DataKey, error) {
	if h == nil || h.Err != nil || len(h.Body) == 0 {
		return nil, nil
	}
	inner, err := h.Unseal()
	var dk *DataKey
	if err == nil {
		var frame []byte
		if dk, frame, err = s.bodyKey(ctx, h.Namespace, inner, true); err == nil {
			var plain []byte
			if plain, err = dk.Open(frame, headAD(h.Namespace, h.Key)); err == nil {
				err = s.restore(dk, h, plain, memo)
			}
		}
	}
	if err != nil {
		if errors.Is(err, ErrKeyUnavailable) && !errors.Is(err, ErrKeyMismatch) || ctx.Err() != nil {
			return nil, fmt.Errorf("%s/%s: %w", h.Namespace, h.Key, err)
		}
		h.Err, h.Body, h.Frames = err, nil, nil
		return nil, nil
	}
	return dk, nil
}

// frameMemo holds the frames one call has opened, by namespace and
// address, with the sealed bytes they came from: heads read together often
// carry the same part (their chart), which is opened once. nil: no memo.
type frameMemo map[place]openedFrame

type openedFrame struct{ sealed, plain []byte }

// restore sets h's digests and body from plain, and opens its frames
// (through memo).
func (s *sealing) restore(dk *DataKey, h *driver.Head, plain []byte, memo frameMemo) error {
	const n = len(driver.Digest{})
	if len(plain) < 5*n {
		return corrupt("sealed head body: short")
	}
	addrs := map[driver.Digest]driver.Digest{}
	for i, d := range digestFields(h) {
		a := *d
		copy(d[:], plain[i*n:])
		if !d.IsZero() {
			addrs[a] = *d
			s.address(dk, h.Namespace, *d)
		}
	}
	h.Body = plain[5*n:]
	if len(h.Frames) > 0 {
		frames := make(map[driver.Digest][]byte, len(h.Frames))
		for a, f := range h.Frames {
			d, ok := addrs[a]
			if !ok {
				continue
			}
			at := place{h.Namespace, a}
			if o, ok := memo[at]; ok && bytes.Equal(o.sealed, f) {
				frames[d] = o.plain
				continue
			}
			if p, err := dk.Open(f, partAD(h.Namespace, a)); err == nil {
				frames[d] = p
				if memo != nil {
					memo[at] = openedFrame{f, p}
				}
			}
		}
		h.Frames = frames
	}
	return nil
}

func (s *sealing) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	hs, err := s.b.Heads(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.openAll(ctx, hs)
}

// openAll opens the heads b returned (open) and leaves out keyring
// records.
func (s *sealing) openAll(ctx context.Context, hs []*driver.Head) ([]*driver.Head, error) {
	out, memo := hs[:0], frameMemo{}
	for _, h := range hs {
		if isKeyring(h) {
			continue
		}
		dk, err := s.open(ctx, h, memo)
		if err != nil {
			return nil, err
		}
		if err := s.openDescription(ctx, h, dk); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func (s *sealing) List(ctx context.Context, q driver.ListQuery) ([]*driver.Head, error) {
	var out []*driver.Head
	for {
		hs, err := s.b.List(ctx, q)
		if err != nil {
			return nil, err
		}
		full := q.Limit > 0 && len(hs) == q.Limit
		var last *driver.Head
		if len(hs) > 0 {
			last = hs[len(hs)-1]
		}
		opened, err := s.openAll(ctx, hs)
		if err != nil {
			return nil, err
		}
		out = append(out, opened...)
		// A page that held keyring records is topped up from after it.
		if !full || len(opened) == len(hs) {
			return out, nil
		}
		q.After, q.Limit = driver.CursorOf(last), len(hs)-len(opened)
	}
}

func (s *sealing) Parts(ctx context.Context, refs []driver.PartRef) (map[driver.Digest][]byte, error) {
	type at struct {
		d  driver.Digest
		dk *DataKey
	}
	sealed := make([]driver.PartRef, 0, len(refs))
	back := map[place]at{}
	s.mu.Lock()
	for _, r := range refs {
		id, ok := s.keyOf[place{r.Namespace, r.Digest}]
		if !ok {
			continue // not from a head read here: absent, as the contract allows
		}
		dk := s.keys[id]
		a := dk.Address(r.Digest)
		sr := driver.PartRef{Namespace: r.Namespace, Digest: a, Kind: r.Kind}
		if !r.Base.IsZero() {
			sr.Base = dk.Address(r.Base)
		}
		sealed = append(sealed, sr)
		back[place{r.Namespace, a}] = at{r.Digest, dk}
	}
	s.mu.Unlock()
	got, err := s.b.Parts(ctx, sealed)
	if err != nil {
		return nil, err
	}
	out := make(map[driver.Digest][]byte, len(got))
	opened := map[driver.Digest]bool{}
	for _, r := range sealed {
		f, ok := got[r.Digest]
		if !ok {
			continue
		}
		// One digest may be asked of several namespaces (the map is by
		// digest): a copy that opens wins over one that does not.
		w := back[place{r.Namespace, r.Digest}]
		if p, err := w.dk.Open(f, partAD(r.Namespace, r.Digest)); err == nil {
			out[w.d] = p
			opened[w.d] = true
		} else if !opened[w.d] {
			out[w.d] = f // the engine finds the digest wrong: ErrCorrupt naming the part
		}
	}
	return out, nil
}

func (s *sealing) Create(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	sh, sp, err := s.seal(ctx, h, parts)
	if err != nil {
		return err
	}
	return s.b.Create(ctx, sh, sp)
}

func (s *sealing) Update(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	sh, sp, err := s.seal(ctx, h, parts)
	if err != nil {
		return err
	}
	return s.b.Update(ctx, sh, sp)
}

func (s *sealing) Delete(ctx context.Context, ns, key string, have func(driver.Digest) bool) (*driver.Head, map[driver.Digest][]byte, error) {
	sealedHave := func(a driver.Digest) bool {
		s.mu.Lock()
		d, ok := s.digests[place{ns, a}]
		s.mu.Unlock()
		return ok && have(d)
	}
	h, frames, err := s.b.Delete(ctx, ns, key, sealedHave)
	if err != nil {
		return h, nil, err
	}
	dk, err := s.open(ctx, h, nil) // the head's parts are sealed by its key
	if err != nil {
		return nil, nil, err
	}
	out := make(map[driver.Digest][]byte, len(frames))
	if dk == nil {
		return h, out, nil
	}
	for _, d := range digestFields(h) {
		if d.IsZero() {
			continue
		}
		a := dk.Address(*d)
		if f, ok := frames[a]; ok {
			if p, err := dk.Open(f, partAD(ns, a)); err == nil {
				out[*d] = p
			}
		}
	}
	return h, out, nil
}

// Stats leaves out the keyring records (their bytes too, as their bodies
// are stored).
func (s *sealing) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	st, err := s.b.Stats(ctx, ns)
	if err != nil {
		return st, err
	}
	recs, err := s.b.Heads(ctx, driver.Query{Namespace: ns, Key: keyringKey})
	if err != nil {
		return st, err
	}
	for _, r := range recs {
		st.Releases--
		st.HeadBytes -= int64(len(r.Body))
	}
	return st, nil
}

// EncryptsAtRest marks a backend that encrypts (registry.Encrypt does not
// wrap it again).
func (s *sealing) EncryptsAtRest() {}

// Plain returns the backend s stores through, which sees sealed bodies
// and parts as opaque bytes (engine.View.Seal reads plaintext releases
// through it).
func (s *sealing) Plain() driver.Backend { return s.b }

// Under returns the backend b stores through: what Wrap wrapped, or b
// itself. Tests that read or damage what a store holds reach it so.
func Under(b driver.Backend) driver.Backend {
	if p, ok := b.(interface{ Plain() driver.Backend }); ok {
		return p.Plain()
	}
	return b
}

func (s *sealing) Close() error { return errors.Join(s.b.Close(), s.ring.Close()) }

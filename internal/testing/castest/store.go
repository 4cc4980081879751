package castest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/helmstore/helmstore/cas"
)

// Store is an in-memory cas.ObjectStore (and cas.ReferrerAdder) with
// injectable faults, for testing the no-transaction protocol and the
// backends built on it.
//
// A Store is one process's connection to data that several processes
// share, as clients of one database: New makes empty data and a first
// process over it, Process another process over the same data with its own
// Plan. Each process can die (Crash, or a Plan's Crash fault): from then
// on every call it makes, from whichever goroutine, fails with ErrCrashed,
// so that what a dead writer left behind can be examined and cleaned up by
// another process.
//
// Every call is atomic and checks preconditions exactly as the
// cas.ObjectStore contract says; objects are copied in and out, never
// shared with the caller. Versions and UIDs are never reused. Without
// faults the Store is also a complete, fast ObjectStore for conformance
// tests.
type Store struct {
	d *data
	p *proc
}

// data is what the processes share: the objects, and a clock.
type data struct {
	mu      sync.Mutex
	objects map[cas.Ref]*entry
	// last counts versions and UIDs (never reused).
	last uint64
	// offset is added to the real time for Created (Age moves it).
	offset time.Duration
	// calls counts every call of every process (Stats).
	calls, writes int
}

// entry is one stored object and the version it replaced (for Stale
// reads; nil if it was created by its last write).
type entry struct {
	obj  *cas.Object
	prev *cas.Object
	// garbled makes reads return the object as not decodable (Err).
	garbled bool
}

// proc is one process: its fault plan and whether it is dead.
type proc struct {
	mu     sync.Mutex
	plan   Plan
	seq    int
	writes int
	dead   bool
	// trace records the process's calls and their outcome, for
	// reporting a failure (Trace).
	trace []string
	// delay is slept before each call (Slow).
	delay func(op Op) time.Duration
}

var (
	_ cas.ObjectStore   = (*Store)(nil)
	_ cas.ReferrerAdder = (*Store)(nil)
)

// New returns a process over new, empty data, running plan (nil: no
// faults).
func New(plan Plan) *Store {
	return &Store{d: &data{objects: map[cas.Ref]*entry{}}, p: &proc{plan: plan}}
}

// Process returns another process over s's data, running plan (nil: no
// faults). It is alive even if s is dead.
func (s *Store) Process(plan Plan) *Store {
	return &Store{d: s.d, p: &proc{plan: plan}}
}

// Slow makes the process sleep delay(op) before each call (outside any
// lock), to vary how its calls interleave with other processes'. It
// returns s.
func (s *Store) Slow(delay func(op Op) time.Duration) *Store {
	s.p.mu.Lock()
	s.p.delay = delay
	s.p.mu.Unlock()
	return s
}

// Crash kills the process now: every later call of it fails with
// ErrCrashed.
func (s *Store) Crash() {
	s.p.mu.Lock()
	s.p.dead = true
	s.p.trace = append(s.p.trace, "crashed (Crash)")
	s.p.mu.Unlock()
}

// Dead reports whether the process has crashed.
func (s *Store) Dead() bool {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.p.dead
}

// Writes returns how many writes the process has attempted (including
// failed ones): a run without faults tells how many crash points a
// scenario has.
func (s *Store) Writes() int {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.p.writes
}

// Trace returns the process's calls so far, one line each with the fault
// injected and the outcome, for a test to print when an invariant fails.
func (s *Store) Trace() []string {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return append([]string(nil), s.p.trace...)
}

// WithoutReferrerAdder returns s as a plain cas.ObjectStore, without the
// optional AddReferrer, so that the protocol adds referrers by
// compare-and-swap instead.
func (s *Store) WithoutReferrerAdder() cas.ObjectStore { return plain{s} }

// plain hides Store's AddReferrer.
type plain struct{ s *Store }

func (p plain) Create(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	return p.s.Create(ctx, obj)
}
func (p plain) Get(ctx context.Context, ref cas.Ref, opt cas.ReadOptions) (*cas.Object, error) {
	return p.s.Get(ctx, ref, opt)
}
func (p plain) Replace(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	return p.s.Replace(ctx, obj)
}
func (p plain) Delete(ctx context.Context, ref cas.Ref, version string) error {
	return p.s.Delete(ctx, ref, version)
}
func (p plain) List(ctx context.Context, sel cas.Selector) ([]*cas.Object, error) {
	return p.s.List(ctx, sel)
}

// call runs one call of the process: it numbers it, asks the plan, and
// applies it (apply runs under the data lock, and reports the outcome)
// unless the fault says otherwise. stale is the answer of a Stale fault,
// also under the data lock.
func (s *Store) call(ctx context.Context, c Call, ref cas.Ref, staleOK bool, apply func() error, stale func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := s.p
	p.mu.Lock()
	if p.dead {
		p.trace = append(p.trace, fmt.Sprintf("%s %s: dead", c, RefString(ref)))
		p.mu.Unlock()
		return fmt.Errorf("%s %s: %w", c, RefString(ref), ErrCrashed)
	}
	op := Op{Call: c, Ref: ref, Seq: p.seq, Write: -1, Stale: staleOK && c == CallGet}
	p.seq++
	if c.IsWrite() {
		op.Write = p.writes
		p.writes++
	}
	delay := p.delay
	p.mu.Unlock()
	if delay != nil {
		if d := delay(op); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
	}
	// The plan runs under the process's lock, so that a stateful plan
	// sees one call at a time and a crash is ordered with the calls.
	p.mu.Lock()
	if p.dead {
		p.trace = append(p.trace, op.String()+": dead")
		p.mu.Unlock()
		return fmt.Errorf("%s: %w", op, ErrCrashed)
	}
	f := None
	if p.plan != nil {
		f = p.plan(op)
	}
	if !c.IsWrite() {
		switch f {
		case LoseAnswer:
			f = Fail
		case CrashAfter:
			f = Crash
		}
	}
	if f == Stale && !op.Stale {
		f = None
	}
	var err error
	switch f {
	case Fail:
		err = fmt.Errorf("%s: %w", op, ErrUnavailable)
	case Crash:
		p.dead = true
		err = fmt.Errorf("%s: %w", op, ErrCrashed)
	default:
		s.d.mu.Lock()
		s.d.calls++
		if c.IsWrite() {
			s.d.writes++
		}
		if f == Stale {
			err = stale()
		} else {
			err = apply()
		}
		s.d.mu.Unlock()
		switch f {
		case LoseAnswer:
			err = fmt.Errorf("%s (outcome %v): %w: %w", op, outcome(err), ErrUnavailable, ErrAnswerLost)
		case CrashAfter:
			p.dead = true
			err = fmt.Errorf("%s (outcome %v): %w", op, outcome(err), ErrCrashed)
		}
	}
	line := op.String()
	if f != None {
		line += " [" + f.String() + "]"
	}
	p.trace = append(p.trace, line+": "+outcome(err))
	p.mu.Unlock()
	return err
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// next returns a new version or UID number. d.mu must be held.
func (d *data) next() string {
	d.last++
	return strconv.FormatUint(d.last, 10)
}

// now is the store's clock for Created. d.mu must be held.
func (d *data) now() time.Time { return time.Now().Add(d.offset) }

// Create implements cas.ObjectStore.
func (s *Store) Create(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	if err := checkObject(obj); err != nil {
		return nil, err
	}
	ref := obj.Ref()
	var out *cas.Object
	err := s.call(ctx, CallCreate, ref, false, func() error {
		if e := s.d.objects[ref]; e != nil {
			return fmt.Errorf("create %s: %w", RefString(ref), cas.ErrExists)
		}
		o := copyObject(obj, true)
		o.UID = "uid-" + s.d.next()
		o.Version = s.d.next()
		o.Created = s.d.now()
		o.StoredBytes, o.Err = 0, nil
		s.d.objects[ref] = &entry{obj: o}
		out = answer(o)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get implements cas.ObjectStore. With opt.Stale, a Stale fault answers
// with the object's previous version (or ErrNotFound).
func (s *Store) Get(ctx context.Context, ref cas.Ref, opt cas.ReadOptions) (*cas.Object, error) {
	var out *cas.Object
	err := s.call(ctx, CallGet, ref, opt.Stale, func() error {
		e := s.d.objects[ref]
		if e == nil {
			return fmt.Errorf("get %s: %w", RefString(ref), cas.ErrNotFound)
		}
		out = e.read(!opt.Meta)
		return nil
	}, func() error {
		e := s.d.objects[ref]
		if e == nil || e.prev == nil {
			return fmt.Errorf("get %s (stale): %w", RefString(ref), cas.ErrNotFound)
		}
		out = (&entry{obj: e.prev, garbled: e.garbled}).read(!opt.Meta)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetMany implements cas.BatchReader as a Get of each name, each with its
// own faults (a stale one leaves the object out or answers an older
// version, a failed one fails the call). Like a store that does not index
// every object, it leaves out every third name it is asked for, so that
// the protocol's reads of what GetMany missed are exercised too.
func (s *Store) GetMany(ctx context.Context, k cas.Kind, ns string, names []string, opt cas.ReadOptions) (map[string]*cas.Object, error) {
	out := map[string]*cas.Object{}
	for i, n := range names {
		if i%3 == 2 {
			continue
		}
		o, err := s.Get(ctx, cas.Ref{Kind: k, Namespace: ns, Name: n}, opt)
		if errors.Is(err, cas.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[n] = o
	}
	return out, nil
}

// Replace implements cas.ObjectStore.
func (s *Store) Replace(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	if err := checkObject(obj); err != nil {
		return nil, err
	}
	if obj.Version == "" {
		return nil, fmt.Errorf("castest: replace %s without a version", RefString(obj.Ref()))
	}
	ref := obj.Ref()
	var out *cas.Object
	err := s.call(ctx, CallReplace, ref, false, func() error {
		e := s.d.objects[ref]
		switch {
		case e == nil:
			return fmt.Errorf("replace %s: %w", RefString(ref), cas.ErrNotFound)
		case e.obj.Version != obj.Version:
			return fmt.Errorf("replace %s at version %s (it is at %s): %w", RefString(ref), obj.Version, e.obj.Version, cas.ErrVersionMismatch)
		}
		o := copyObject(obj, true)
		o.UID, o.Created = e.obj.UID, e.obj.Created
		o.Version = s.d.next()
		o.StoredBytes, o.Err = 0, nil
		e.prev, e.obj, e.garbled = e.obj, o, false
		out = answer(o)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements cas.ObjectStore.
func (s *Store) Delete(ctx context.Context, ref cas.Ref, version string) error {
	return s.call(ctx, CallDelete, ref, false, func() error {
		e := s.d.objects[ref]
		switch {
		case e == nil:
			return fmt.Errorf("delete %s: %w", RefString(ref), cas.ErrNotFound)
		case version != "" && e.obj.Version != version:
			return fmt.Errorf("delete %s at version %s (it is at %s): %w", RefString(ref), version, e.obj.Version, cas.ErrVersionMismatch)
		}
		delete(s.d.objects, ref)
		return nil
	}, nil)
}

// AddReferrer implements cas.ReferrerAdder.
func (s *Store) AddReferrer(ctx context.Context, ref cas.Ref, r cas.Referrer) (*cas.Object, error) {
	var out *cas.Object
	err := s.call(ctx, CallAddReferrer, ref, false, func() error {
		e := s.d.objects[ref]
		if e == nil {
			return fmt.Errorf("add referrer to %s: %w", RefString(ref), cas.ErrNotFound)
		}
		o := copyObject(e.obj, true)
		if !o.ReferredBy(r.UID) {
			o.Referrers = append(o.Referrers, r)
		}
		o.Version = s.d.next()
		e.prev, e.obj = e.obj, o
		out = e.read(true)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List implements cas.ObjectStore: exactly the objects sel selects, sorted
// by namespace and name. With Selector.Summary, a head that is not garbled
// is returned with its summary only (cas.Object.SummaryOnly), as crsplit
// lists heads.
func (s *Store) List(ctx context.Context, sel cas.Selector) ([]*cas.Object, error) {
	var out []*cas.Object
	err := s.call(ctx, CallList, cas.Ref{Kind: sel.Kind, Namespace: sel.Namespace, Name: sel.Name}, false, func() error {
		for ref, e := range s.d.objects {
			if !selects(sel, ref, e.obj) {
				continue
			}
			o := e.read(!sel.Meta)
			if sel.Summary && o.Head != nil {
				h := o.Head
				o.Head = &cas.HeadRecord{HeadFields: h.HeadFields, SummaryFields: h.SummaryFields}
				o.SummaryOnly = true
			}
			out = append(out, o)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func selects(sel cas.Selector, ref cas.Ref, o *cas.Object) bool {
	if ref.Kind != sel.Kind || sel.Namespace != "" && ref.Namespace != sel.Namespace || sel.Name != "" && ref.Name != sel.Name {
		return false
	}
	for k, v := range sel.Labels {
		if w, ok := o.Labels[k]; !ok || w != v {
			return false
		}
	}
	for _, k := range sel.Has {
		if _, ok := o.Labels[k]; !ok {
			return false
		}
	}
	for k, v := range sel.Not {
		if w, ok := o.Labels[k]; ok && w == v {
			return false
		}
	}
	return true
}

// checkObject refuses an object no store would accept.
func checkObject(obj *cas.Object) error {
	if obj == nil {
		return fmt.Errorf("castest: nil object")
	}
	n := 0
	for _, set := range []bool{obj.Head != nil, obj.Part != nil, obj.Chunk != nil} {
		if set {
			n++
		}
	}
	want := map[cas.Kind]bool{cas.KindHead: obj.Head != nil, cas.KindChart: obj.Part != nil, cas.KindValues: obj.Part != nil,
		cas.KindManifest: obj.Part != nil, cas.KindChunk: obj.Chunk != nil}
	ok, known := want[obj.Kind]
	switch {
	case !known:
		return fmt.Errorf("castest: object %q of unknown kind %d", obj.Name, obj.Kind)
	case obj.Name == "" || obj.Namespace == "":
		return fmt.Errorf("castest: %s object without a name or namespace (%q/%q)", KindName(obj.Kind), obj.Namespace, obj.Name)
	case n != 1 || !ok:
		return fmt.Errorf("castest: %s object %s/%s must hold exactly its own kind of record", KindName(obj.Kind), obj.Namespace, obj.Name)
	}
	return nil
}

// answer is what Create and Replace return: the object as stored, without
// its record (which the contract lets a store omit, so the protocol must
// not rely on it).
func answer(o *cas.Object) *cas.Object {
	c := copyObject(o, false)
	c.StoredBytes = storedBytes(o)
	return c
}

// read returns a copy of the entry's object, with its record if record,
// as a store returns it (StoredBytes set; Err and no record if garbled).
func (e *entry) read(record bool) *cas.Object {
	o := copyObject(e.obj, record && !e.garbled)
	o.StoredBytes = storedBytes(e.obj)
	if e.garbled {
		o.Err = fmt.Errorf("castest: %s object %s/%s: %w", KindName(o.Kind), o.Namespace, o.Name, errGarbled)
	}
	return o
}

// storedBytes approximates the size of o as stored.
func storedBytes(o *cas.Object) int64 {
	n := int64(64 + len(o.Name) + len(o.UID) + len(o.Version))
	for k, v := range o.Labels {
		n += int64(len(k) + len(v))
	}
	n += int64(48 * len(o.Referrers))
	switch {
	case o.Head != nil:
		h := o.Head
		n += int64(len(h.Key)+len(h.Name)+len(h.Status)+len(h.Owner)+len(h.Body)) + 5*64 + 32
	case o.Part != nil:
		n += int64(len(o.Part.Data)) + 2*64 + 32
	case o.Chunk != nil:
		n += int64(len(o.Chunk.Data)+len(o.Chunk.Of)) + 8
	}
	return n
}

// copyObject returns a deep copy of o, without its record unless record.
func copyObject(o *cas.Object, record bool) *cas.Object {
	c := *o
	c.Labels = nil
	if o.Labels != nil {
		c.Labels = make(map[string]string, len(o.Labels))
		for k, v := range o.Labels {
			c.Labels[k] = v
		}
	}
	c.Referrers = append([]cas.Referrer(nil), o.Referrers...)
	c.Head, c.Part, c.Chunk = nil, nil, nil
	if !record {
		return &c
	}
	if o.Head != nil {
		c.Head = CloneHead(o.Head)
	}
	if o.Part != nil {
		p := *o.Part
		p.Data = cloneBytes(p.Data)
		c.Part = &p
	}
	if o.Chunk != nil {
		ch := *o.Chunk
		ch.Data = cloneBytes(ch.Data)
		c.Chunk = &ch
	}
	return &c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// CloneHead returns a deep copy of h (tests compare or damage copies).
func CloneHead(h *cas.HeadRecord) *cas.HeadRecord {
	c := *h
	c.Body = cloneBytes(h.Body)
	if h.BodyChunks != nil {
		cs := *h.BodyChunks
		c.BodyChunks = &cs
	}
	c.Embedded = append([]cas.EmbeddedFrame(nil), h.Embedded...)
	for i := range c.Embedded {
		c.Embedded[i].Data = cloneBytes(c.Embedded[i].Data)
	}
	return &c
}

package drivertest

import (
	"sort"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
)

// memView scopes Helm's Memory driver to a namespace the way a helmstore
// view is scoped. Memory keeps one current namespace (and its Create and
// Update switch it), so every call sets it first, under one lock. On the
// Helm 4 run the Memory driver is Helm 4's (memory4).
type memView struct {
	mu *sync.Mutex
	m  memDriver
	ns string
	// enc holds the encodings of the releases Memory holds, by the
	// pointer it holds each by. Memory never changes a release it holds
	// (an Update stores another), and the map keeps the pointers alive, so
	// an entry is never stale.
	enc map[*release.Release]*memEncoded
}

// memEncoded is a release Memory holds, encoded for comparisons: its
// canonical line (see canon) and what sameAs compares.
type memEncoded struct {
	line string
	want wanted
}

// memDriver is Helm's Memory driver in the tables' types: Helm 3's own, or
// Helm 4's behind the conversion (memory4).
type memDriver interface {
	helmdriver.Driver
	SetNamespace(ns string)
}

// newMemory returns the oracle of the face h runs on: that Helm's Memory
// driver.
func (h Harness) newMemory() memView {
	return memView{mu: new(sync.Mutex), m: h.face().memory(), ns: "default", enc: map[*release.Release]*memEncoded{}}
}

func (v memView) Namespace(ns string) memView { return memView{mu: v.mu, m: v.m, ns: ns, enc: v.enc} }

// encoded returns the encoding of r, a release Memory holds (under v.mu).
func (v memView) encoded(t testing.TB, r *release.Release) *memEncoded {
	t.Helper()
	e := v.enc[r]
	if e == nil {
		e = &memEncoded{line: canonLine(r, encode(t, r)), want: want(t, r)}
		v.enc[r] = e
	}
	return e
}

// wanted is Get for comparisons: what Memory holds for key, encoded.
func (v memView) wanted(t testing.TB, key string) (wanted, error) {
	t.Helper()
	defer v.lock()()
	r, err := v.m.Get(key)
	if err != nil {
		return wanted{}, err
	}
	return v.encoded(t, r).want, nil
}

// canonList is canon(List(filter)) without copying or encoding again the
// releases it encoded before.
func (v memView) canonList(t testing.TB, filter func(*release.Release) bool) []string {
	t.Helper()
	defer v.lock()()
	rs, _ := v.m.List(filter)
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = v.encoded(t, r).line
	}
	sort.Strings(out)
	return out
}

func (v memView) Name() string { return v.m.Name() }

func (v memView) lock() func() {
	v.mu.Lock()
	v.m.SetNamespace(v.ns)
	return v.mu.Unlock
}

// Memory stores the pointers it is given; the oracle gets private copies so
// that nothing a caller does later changes what it holds.
func clone(r *release.Release) *release.Release {
	if r == nil {
		return nil
	}
	c := *r
	if r.Info != nil {
		info := *r.Info
		c.Info = &info
	}
	if r.Labels != nil {
		c.Labels = map[string]string{}
		for k, val := range r.Labels {
			c.Labels[k] = val
		}
	}
	return &c
}

func (v memView) Get(key string) (*release.Release, error) {
	defer v.lock()()
	r, err := v.m.Get(key)
	return clone(r), err
}

func (v memView) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	defer v.lock()()
	rs, err := v.m.List(filter)
	for i := range rs {
		rs[i] = clone(rs[i])
	}
	return rs, err
}

func (v memView) Query(labels map[string]string) ([]*release.Release, error) {
	defer v.lock()()
	rs, err := v.m.Query(labels)
	for i := range rs {
		rs[i] = clone(rs[i])
	}
	return rs, err
}

func (v memView) Create(key string, r *release.Release) error {
	defer v.lock()()
	return v.m.Create(key, clone(r))
}

func (v memView) Update(key string, r *release.Release) error {
	defer v.lock()()
	return v.m.Update(key, clone(r))
}

func (v memView) Delete(key string) (*release.Release, error) {
	defer v.lock()()
	r, err := v.m.Delete(key)
	return clone(r), err
}

var (
	_ helmdriver.Driver = memView{}
	_ memDriver         = (*helmdriver.Memory)(nil)
)

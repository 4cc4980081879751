package drivertest

import (
	"sync"

	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
)

// memView scopes Helm's Memory driver to a namespace the way a helmstore
// view is scoped. Memory keeps one current namespace (and its Create and
// Update switch it), so every call sets it first, under one lock.
type memView struct {
	mu *sync.Mutex
	m  *helmdriver.Memory
	ns string
}

func newMemory() memView {
	return memView{mu: new(sync.Mutex), m: helmdriver.NewMemory(), ns: "default"}
}

func (v memView) Namespace(ns string) memView { return memView{mu: v.mu, m: v.m, ns: ns} }

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

var _ helmdriver.Driver = memView{}

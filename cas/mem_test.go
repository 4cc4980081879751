package cas_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/helmstore/helmstore/cas"
)

// memStore is the smallest ObjectStore that meets the contract: a map
// under a mutex, every object copied in and out. (The fault-injecting one
// is castest's; this one only lets the protocol's own tests run without a
// service.)
type memStore struct {
	mu      sync.Mutex
	objs    map[cas.Ref]*cas.Object
	counter int
	calls   map[string]int // per method, for round-trip counts
}

func newMemStore() *memStore {
	return &memStore{objs: map[cas.Ref]*cas.Object{}, calls: map[string]int{}}
}

func clone(o *cas.Object) *cas.Object {
	c := *o
	c.Labels = maps.Clone(o.Labels)
	c.Referrers = slices.Clone(o.Referrers)
	if o.Head != nil {
		c.Head = o.Head.Clone()
	}
	if o.Part != nil {
		p := *o.Part
		p.Data = slices.Clone(o.Part.Data)
		c.Part = &p
	}
	if o.Chunk != nil {
		ch := *o.Chunk
		ch.Data = slices.Clone(o.Chunk.Data)
		c.Chunk = &ch
	}
	return &c
}

func (m *memStore) next() string { m.counter++; return strconv.Itoa(m.counter) }

func (m *memStore) Create(_ context.Context, obj *cas.Object) (*cas.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["create"]++
	if _, ok := m.objs[obj.Ref()]; ok {
		return nil, fmt.Errorf("create %s: %w", obj.Name, cas.ErrExists)
	}
	o := clone(obj)
	o.UID, o.Version, o.Created = "uid"+m.next(), m.next(), time.Now()
	o.StoredBytes = int64(len(fmt.Sprint(o)))
	m.objs[o.Ref()] = o
	return clone(o), nil
}

func (m *memStore) Get(_ context.Context, ref cas.Ref, _ cas.ReadOptions) (*cas.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["get"]++
	o, ok := m.objs[ref]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", ref.Name, cas.ErrNotFound)
	}
	return clone(o), nil
}

func (m *memStore) Replace(_ context.Context, obj *cas.Object) (*cas.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["replace"]++
	o, ok := m.objs[obj.Ref()]
	if !ok {
		return nil, fmt.Errorf("replace %s: %w", obj.Name, cas.ErrNotFound)
	}
	if o.Version != obj.Version {
		return nil, fmt.Errorf("replace %s: %w", obj.Name, cas.ErrVersionMismatch)
	}
	n := clone(obj)
	n.UID, n.Created, n.Version = o.UID, o.Created, m.next()
	n.StoredBytes = o.StoredBytes
	m.objs[n.Ref()] = n
	return clone(n), nil
}

func (m *memStore) Delete(_ context.Context, ref cas.Ref, version string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["delete"]++
	o, ok := m.objs[ref]
	if !ok {
		return fmt.Errorf("delete %s: %w", ref.Name, cas.ErrNotFound)
	}
	if version != "" && o.Version != version {
		return fmt.Errorf("delete %s: %w", ref.Name, cas.ErrVersionMismatch)
	}
	delete(m.objs, ref)
	return nil
}

func (m *memStore) List(_ context.Context, sel cas.Selector) ([]*cas.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["list"]++
	var out []*cas.Object
	for ref, o := range m.objs {
		if ref.Kind != sel.Kind || sel.Namespace != "" && ref.Namespace != sel.Namespace || sel.Name != "" && ref.Name != sel.Name {
			continue
		}
		ok := true
		for k, v := range sel.Labels {
			if w, has := o.Labels[k]; !has || w != v {
				ok = false
			}
		}
		for _, k := range sel.Has {
			if _, has := o.Labels[k]; !has {
				ok = false
			}
		}
		if ok {
			out = append(out, clone(o))
		}
	}
	return out, nil
}

// adderStore is memStore with an atomic AddReferrer.
type adderStore struct{ *memStore }

func (m adderStore) AddReferrer(_ context.Context, ref cas.Ref, r cas.Referrer) (*cas.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls["addReferrer"]++
	o, ok := m.objs[ref]
	if !ok {
		return nil, fmt.Errorf("add referrer to %s: %w", ref.Name, cas.ErrNotFound)
	}
	if !o.ReferredBy(r.UID) {
		o.Referrers = append(o.Referrers, r)
	}
	o.Version = m.next()
	return clone(o), nil
}

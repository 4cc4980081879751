package engine

import (
	"fmt"
	"reflect"
	"sync"
)

// Shared is the set of stores a face's Init opened, one per driver name,
// connection string and getter, shared by every Init of the process: an
// operator that calls Init for each of 500 namespaces opens one pool, not
// 500. The zero Shared is ready to use.
type Shared[S any] struct {
	// mu guards m only; it is never held while a store opens, so a slow
	// open delays only the Inits that wait for that same store.
	mu sync.Mutex
	m  map[sharedKey]*sharedOpen[S]
}

// sharedKey identifies a store Init opened. getter is the getter itself when
// its type is comparable, otherwise getterIdentity of it.
type sharedKey struct {
	name, conn string
	getter     any
}

// getterIdentity stands for a getter whose type is not comparable (a map or
// func type, say), which cannot be a map key: the same map or func is the
// same getter.
type getterIdentity struct {
	typ reflect.Type
	ptr uintptr
}

// sharedOpen is a store Init opened or is opening. done is closed once store
// and err are set.
type sharedOpen[S any] struct {
	done  chan struct{}
	store S
	err   error
}

// keyOf returns the key under which the store for name, conn and getter is
// shared; ok is false for a getter that cannot be recognised again (a struct
// value holding a map, say), which then gets a store of its own.
func keyOf(name, conn string, getter any) (k sharedKey, ok bool) {
	k = sharedKey{name: name, conn: conn}
	if getter == nil {
		return k, true
	}
	t := reflect.TypeOf(getter)
	if t.Comparable() {
		k.getter = getter
		return k, true
	}
	switch v := reflect.ValueOf(getter); v.Kind() {
	case reflect.Map, reflect.Func:
		k.getter = getterIdentity{typ: t, ptr: v.Pointer()}
		return k, true
	}
	return k, false
}

// Get returns the store shared for name, conn and getter, calling open on
// first use. Concurrent calls for the same store wait for one open; a failed
// open is not remembered, so the next call tries again.
func (s *Shared[S]) Get(name, conn string, getter any, open func() (S, error)) (S, error) {
	key, ok := keyOf(name, conn, getter)
	if !ok {
		return open()
	}
	s.mu.Lock()
	if o, found := s.m[key]; found {
		s.mu.Unlock()
		<-o.done
		return o.store, o.err
	}
	o := &sharedOpen[S]{done: make(chan struct{})}
	if s.m == nil {
		s.m = map[sharedKey]*sharedOpen[S]{}
	}
	s.m[key] = o
	s.mu.Unlock()

	opened := false
	defer func() {
		if o.err != nil || !opened { // failed, or open panicked
			if o.err == nil {
				o.err = fmt.Errorf("helmstore: open %s: the opener panicked", name)
			}
			s.mu.Lock()
			delete(s.m, key)
			s.mu.Unlock()
		}
		close(o.done)
	}()
	o.store, o.err = open()
	opened = true
	return o.store, o.err
}

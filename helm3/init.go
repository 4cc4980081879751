package helm3

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/helmstore/helmstore/driver"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Init is a drop-in for cfg.Init(getter, namespace, helmDriver, log) that
// understands every HELM_DRIVER name. Helm's own names (secret, secrets,
// configmap, configmaps, memory, sql and "") go straight to Helm. helmstore's
// names open the registered backend with its connection string from the
// environment (driver.ConnectionStringFromEnv) and point cfg.Releases at a view of it
// scoped to namespace.
//
// Stores opened by Init are shared per process: every Init with the same
// driver, connection string and getter uses one pool, so an operator that
// calls Init for each of 500 namespaces opens one pool, not 500. Such stores
// live as long as the process; use Open and Configure to control a store's
// lifetime yourself. A getter whose type is not comparable and holds no
// pointer to tell it by (a struct value with a map field, say) cannot be
// recognised again: each Init with one opens a store of its own. Init never
// waits for a store other than its own to open.
func Init(cfg *action.Configuration, getter genericclioptions.RESTClientGetter, namespace, helmDriver string, log action.DebugLog) error {
	if driver.IsHelmDriver(helmDriver) {
		return cfg.Init(getter, namespace, helmDriver, log)
	}
	if err := driver.CheckDriver(helmDriver); err != nil {
		return err
	}
	store, err := sharedStore(helmDriver, getter, log)
	if err != nil {
		return err
	}
	return Configure(cfg, getter, namespace, store, log)
}

// Configure sets cfg up as cfg.Init would (Kubernetes client, logger) but
// stores releases in a view of store scoped to namespace.
func Configure(cfg *action.Configuration, getter genericclioptions.RESTClientGetter, namespace string, store Store, log action.DebugLog) error {
	if log == nil {
		log = func(string, ...interface{}) {}
	}
	// Helm's Init builds the Kubernetes client lazily; the secret driver it
	// sets up is never contacted because Releases is replaced below.
	if err := cfg.Init(getter, namespace, "secret", log); err != nil {
		return err
	}
	cfg.Releases = storage.Init(store.Namespace(namespace))
	return nil
}

// sharedKey identifies a store opened by Init. getter is the getter itself
// when its type is comparable, otherwise getterIdentity of it.
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
type sharedOpen struct {
	done  chan struct{}
	store Store
	err   error
}

var (
	// sharedMu guards shared only; it is never held while a store opens, so
	// a slow Open delays only the Inits that wait for that same store.
	sharedMu sync.Mutex
	shared   = map[sharedKey]*sharedOpen{}
)

// keyOf returns the key under which Init shares the store for name, conn
// and getter; ok is false for a getter Init cannot recognise again (a
// struct value holding a map, say), which then gets a store of its own.
func keyOf(name, conn string, getter genericclioptions.RESTClientGetter) (k sharedKey, ok bool) {
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

// sharedStore returns the store Init shares for name, conn and getter,
// opening it on first use. Concurrent Inits for the same store wait for one
// Open; a failed Open is not remembered, so the next Init tries again.
func sharedStore(name string, getter genericclioptions.RESTClientGetter, log action.DebugLog) (Store, error) {
	conn := driver.ConnectionStringFromEnv(name)
	key, ok := keyOf(name, conn, getter)
	if !ok {
		return openShared(name, conn, getter, log)
	}
	sharedMu.Lock()
	if o, found := shared[key]; found {
		sharedMu.Unlock()
		<-o.done
		return o.store, o.err
	}
	o := &sharedOpen{done: make(chan struct{})}
	shared[key] = o
	sharedMu.Unlock()

	defer func() {
		if o.err != nil || o.store == nil { // failed, or Open panicked
			if o.err == nil {
				o.err = fmt.Errorf("helmstore: open %s: the opener panicked", name)
			}
			sharedMu.Lock()
			delete(shared, key)
			sharedMu.Unlock()
		}
		close(o.done)
	}()
	o.store, o.err = openShared(name, conn, getter, log)
	return o.store, o.err
}

// openShared opens a store for Init.
func openShared(name, conn string, getter genericclioptions.RESTClientGetter, log action.DebugLog) (Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	opts := []Option{WithRESTClientGetter(getter)}
	if log != nil {
		opts = append(opts, WithLog(log))
	}
	return Open(ctx, name, conn, opts...)
}

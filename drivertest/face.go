package drivertest

import (
	"testing"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	helmdriver4 "helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/helmstore/helmstore/helm3"
)

// face is a Helm version the suite runs its tables through: the Helm 3
// face (helm3, the stores the harness gives, as they are) or the Helm 4 one
// (helm4, over the same backends). The tables are written once, in Helm 3's
// types; a face says how a store the harness gave is put on it, what its
// oracle is and how its action package runs the flows.
type face struct {
	// name is the face's subtest of Run.
	name string
	// put returns s, a store the harness gave, on the face, in the tables'
	// types; ok is false if it cannot be (a store that is not helmstore's).
	// nil leaves s as it is.
	put func(s helm3.Store) (_ helm3.Store, ok bool)
	// memory returns a new Memory driver of the face's Helm (memView's).
	memory func() memDriver
	// actions returns the flow steps through the face's action package over
	// d, a store the tables were given or a memView of memory's.
	actions func(d helmdriver.Driver) flowActions
	// secrets returns the flow steps through the face's action package over
	// the face's Helm's Secrets driver on secrets.
	secrets func(secrets corev1.SecretInterface) flowActions
	// only are the tests that run on this face alone, after the shared
	// table (the fields only Helm 4's releases have go here).
	only []suiteTest
}

// suiteTest is one entry of the suite's table.
type suiteTest struct {
	name string
	test func(*testing.T, Harness)
	// measures says that the test bounds what reads allocate
	// (runtime.MemStats, the whole process's): it runs alone among the
	// suite's tests of the test binary (Run's measuring lock).
	measures bool
}

var (
	helm3Face = &face{
		name:    "Helm3",
		memory:  func() memDriver { return helmdriver.NewMemory() },
		actions: func(d helmdriver.Driver) flowActions { return actions3{d} },
		secrets: func(s corev1.SecretInterface) flowActions { return actions3{helmdriver.NewSecrets(s)} },
	}
	helm4Face = &face{
		name:    "Helm4",
		put:     onHelm4,
		memory:  newMemory4,
		actions: flowActions4,
		secrets: func(s corev1.SecretInterface) flowActions { return actions4{helmdriver4.NewSecrets(s)} },
		only:    []suiteTest{{name: "Helm4Releases", test: testHelm4Releases}, {name: "CrossVersion", test: testCrossVersion}},
	}
	// faces are the faces Run runs the suite through, in order.
	faces = []*face{helm3Face, helm4Face}
)

// face returns the face h runs on (Helm 3's unless Run set another).
func (h Harness) face() *face {
	if h.on == nil {
		return helm3Face
	}
	return h.on
}

// onFace returns h with every store its hooks give put on f, and the
// stores the tables give its hooks back as the hooks gave them (origOf).
func (h Harness) onFace(f *face) Harness {
	out := h
	out.on = f
	if f.put == nil {
		return out
	}
	put := func(t *testing.T, s helm3.Store) helm3.Store {
		t.Helper()
		if s == nil {
			return nil
		}
		fs, ok := f.put(s)
		if !ok {
			t.Skipf("the harness's stores (%T) are not helmstore stores (helm3.Open, helm3.New): there is no %s face to put them on", s, f.name)
		}
		return fs
	}
	out.Open = func(t *testing.T) helm3.Store { return put(t, h.Open(t)) }
	if h.Reopen != nil {
		out.Reopen = func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return put(t, h.Reopen(t, origOf(s), opts...))
		}
	}
	if h.Tamper != nil {
		out.Tamper = func(t *testing.T, s helm3.Store) Tamperer { return h.Tamper(t, origOf(s)) }
	}
	if h.Proxied != nil {
		out.Proxied = func(t *testing.T, s helm3.Store, proxy ProxyFunc, opts ...helm3.Option) (helm3.Store, error) {
			ps, err := h.Proxied(t, origOf(s), proxy, opts...)
			if err != nil {
				return nil, err
			}
			return put(t, ps), nil
		}
	}
	if h.Wipe != nil {
		out.Wipe = func(t *testing.T, s helm3.Store) { h.Wipe(t, origOf(s)) }
	}
	if h.Denied != nil {
		out.Denied = func(t *testing.T, s helm3.Store, opts ...helm3.Option) (helm3.Store, error) {
			ds, err := h.Denied(t, origOf(s), opts...)
			if err != nil {
				return nil, err
			}
			return put(t, ds), nil
		}
	}
	if h.Confined != nil {
		out.Confined = func(t *testing.T, s helm3.Store, namespaces ...string) (helm3.Store, error) {
			cs, err := h.Confined(t, origOf(s), namespaces...)
			if err != nil {
				return nil, err
			}
			return put(t, cs), nil
		}
	}
	if h.Overreach != nil {
		out.Overreach = func(t *testing.T, s helm3.Store, namespace string) Overreacher {
			return h.Overreach(t, origOf(s), namespace)
		}
	}
	return out
}

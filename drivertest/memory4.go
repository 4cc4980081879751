package drivertest

import (
	"helm.sh/helm/v3/pkg/release"
	release4 "helm.sh/helm/v4/pkg/release"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	helmdriver4 "helm.sh/helm/v4/pkg/storage/driver"
)

// memory4 is Helm 4's Memory driver in the tables' types, the oracle of the
// Helm 4 run. A release it holds comes back as the same Helm 3 release every
// time (the one it was created from, or one converted once), so memView's
// encodings, kept by pointer, stay valid, as over Helm 3's Memory. memView
// calls it under its lock.
type memory4 struct {
	m *helmdriver4.Memory
	// as3 is the Helm 3 release of each release m holds.
	as3 map[*rspb4.Release]*release.Release
}

func newMemory4() memDriver {
	return &memory4{m: helmdriver4.NewMemory(), as3: map[*rspb4.Release]*release.Release{}}
}

// driver returns the Memory driver itself, for Helm 4's action package.
func (m *memory4) driver() *helmdriver4.Memory { return m.m }

// helm3 returns the Helm 3 release of r, a release m holds.
func (m *memory4) helm3(r release4.Releaser) *release.Release {
	r4, _ := r.(*rspb4.Release)
	if r4 == nil {
		return nil
	}
	r3 := m.as3[r4]
	if r3 == nil {
		r3 = toHelm3(r4)
		m.as3[r4] = r3
	}
	return r3
}

// helm4 returns r, a release memView gives m to keep, as Helm 4's.
func (m *memory4) helm4(r *release.Release) release4.Releaser {
	if r == nil {
		return nil
	}
	r4 := toHelm4(r)
	m.as3[r4] = r
	return r4
}

func (m *memory4) Name() string           { return m.m.Name() }
func (m *memory4) SetNamespace(ns string) { m.m.SetNamespace(ns) }

func (m *memory4) Get(key string) (*release.Release, error) {
	r, err := m.m.Get(key)
	return m.helm3(r), err3(err)
}

func (m *memory4) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	rs, err := m.m.List(func(r release4.Releaser) bool { return filter(m.helm3(r)) })
	return m.all3(rs), err3(err)
}

func (m *memory4) Query(labels map[string]string) ([]*release.Release, error) {
	rs, err := m.m.Query(labels)
	return m.all3(rs), err3(err)
}

func (m *memory4) Create(key string, r *release.Release) error {
	return err3(m.m.Create(key, m.helm4(r)))
}

func (m *memory4) Update(key string, r *release.Release) error {
	return err3(m.m.Update(key, m.helm4(r)))
}

func (m *memory4) Delete(key string) (*release.Release, error) {
	r, err := m.m.Delete(key)
	return m.helm3(r), err3(err)
}

func (m *memory4) all3(rs []release4.Releaser) []*release.Release {
	if rs == nil {
		return nil
	}
	out := make([]*release.Release, len(rs))
	for i, r := range rs {
		out[i] = m.helm3(r)
	}
	return out
}
